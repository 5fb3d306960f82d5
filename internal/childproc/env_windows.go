package childproc

var envKeys = windowsEnvKeys

// foldEnv: variable names are case-insensitive ("Path" is PATH).
const foldEnv = true
