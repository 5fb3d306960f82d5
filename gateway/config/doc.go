// Package config reads skillgate.yaml: the listen address, upstream MCP
// servers, tool, pipeline, skill and plugin folders, Docker services,
// executor settings and limits.
//
// Start from [Default] (or [BuiltinDefault] when no file is given) and
// read a file with [Parse] or [Load]. Parsing is strict: an unknown key, a
// value of the wrong type, a ${VAR} that is not set, and every problem
// [Config.Validate] finds are reported together, each as an [*Error] with
// file:line:col, the field, and what to do about it. [ParseForRun] and
// [LoadForRun] read a config for running the gateway: there a problem
// inside one servers entry (an unset ${VAR}, an unknown key, a bad value or
// name) fails only that server ([Server].Problem) rather than the whole
// config. [Config.Warnings] tells of server commands
// that would not start on this machine.
//
// Keys starting with x- are ignored, as in compose files, so they can hold
// YAML anchors for << merge keys. Values may use ${VAR} and ${VAR:-default}; $${ stands for a literal ${.
// Relative folders, server cwd and a server command that is a relative
// path (./server, not a name such as npx looked up in PATH) are resolved
// against the config file's folder; a command is resolved against cwd
// when that is set. Args are passed as written.
//
// [Import] reads the MCP server entries of Claude Desktop, Claude Code,
// Cursor and VS Code config files; [MarshalServers] and [Merge] write them
// into a skillgate.yaml.
package config
