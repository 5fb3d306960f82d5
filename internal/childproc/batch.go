package childproc

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// IsBatch reports whether path names a batch script (.bat or .cmd, in any
// case), which Windows runs only through cmd.exe.
func IsBatch(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".bat", ".cmd":
		return true
	}
	return false
}

// ErrBatchArg is why BatchCommandLine refuses an argument or script path.
var ErrBatchArg = errors.New(`cmd.exe would read it as more than text (it holds '"', '%', '!', or a line break); ` +
	`run the script's program directly (for npx: node with npm's npx-cli.js), or drop the character`)

// BatchCommandLine is the command line that runs the batch script with
// args under cmdExe (cmd.exe from the system directory), without a shell
// ever reading an argument as a command:
//
//	"C:\Windows\system32\cmd.exe" /d /e:on /v:off /s /c ""C:\npm\npx.cmd" "-y" "@scope/server""
//
// CreateProcess would run a batch script through cmd.exe on its own, with
// the quoting of CommandLineToArgvW, under which cmd.exe treats & | < > in
// an argument as commands; Go's os/exec (up to 1.26 at least) leaves that
// to the caller. Here /d skips AutoRun commands from the registry, /v:off
// keeps !VAR! as text, /s /c runs the quoted rest as it is, and every
// argument is one double-quoted string, inside which cmd.exe takes & | < >
// ^ ( ) literally, as the program the script runs (node) takes its
// arguments after the script forwards them with %*. What quoting cannot
// protect is refused: '"' (it ends the quotes), '%' (expanded even inside
// them), '!' (expanded if the script turns on delayed expansion), and CR,
// LF and NUL (they end the command). Backslashes ending an argument are
// doubled, so that the program behind the script does not read the
// closing quote as an escaped one.
func BatchCommandLine(cmdExe, script string, args []string) (string, error) {
	if strings.ContainsAny(script, "\"%!\r\n\x00") {
		return "", fmt.Errorf("batch script path %q: %w", script, ErrBatchArg)
	}
	var b strings.Builder
	b.WriteString(`"` + cmdExe + `" /d /e:on /v:off /s /c ""` + script + `"`)
	for i, a := range args {
		if strings.ContainsAny(a, "\"%!\r\n\x00") {
			return "", fmt.Errorf("argument %d (%q) of batch script %s: %w", i+1, a, script, ErrBatchArg)
		}
		n := len(a) - len(strings.TrimRight(a, `\`))
		b.WriteString(` "` + a + strings.Repeat(`\`, n) + `"`)
	}
	b.WriteString(`"`)
	return b.String(), nil
}
