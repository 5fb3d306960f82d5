package childproc

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// argvW splits a command line as CommandLineToArgvW (and so node, python
// and Go programs) does.
func argvW(line string) []string {
	var args []string
	var cur strings.Builder
	inArg, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\':
			n := 0
			for i < len(line) && line[i] == '\\' {
				n++
				i++
			}
			if i < len(line) && line[i] == '"' {
				cur.WriteString(strings.Repeat(`\`, n/2))
				if n%2 == 1 {
					cur.WriteByte('"')
				} else {
					quoted = !quoted
				}
			} else {
				cur.WriteString(strings.Repeat(`\`, n))
				i--
			}
			inArg = true
		case c == '"':
			if quoted && i+1 < len(line) && line[i+1] == '"' {
				cur.WriteByte('"')
				i++
			} else {
				quoted = !quoted
			}
			inArg = true
		case (c == ' ' || c == '\t') && !quoted:
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args
}

// A batch script's arguments reach the program it runs (with %*) as they
// were given, and cmd.exe sees none of its special characters outside
// double quotes; what quoting cannot protect is refused.
func TestBatchCommandLine(t *testing.T) {
	const cmdExe, script = `C:\Windows\system32\cmd.exe`, `C:\Program Files\nodejs\npx.cmd`
	const prefix = `"` + cmdExe + `" /d /e:on /v:off /s /c `
	for _, args := range [][]string{
		nil,
		{"-y", "@modelcontextprotocol/server-everything"},
		{"a&calc.exe", "b|c", "<in", ">out", "^x", "(y)", "a b", ""},
		{`C:\dir\`, `C:\dir\\`, `a\b`, `\\server\share`},
		{"--url=https://x/?a=1&b=2", "ünïcödé"},
	} {
		line, err := BatchCommandLine(cmdExe, script, args)
		if err != nil {
			t.Errorf("BatchCommandLine(%q): %v", args, err)
			continue
		}
		if !strings.HasPrefix(line, prefix) {
			t.Errorf("line %q does not start with %q", line, prefix)
			continue
		}
		// cmd.exe /s /c drops the first and the last quote of the rest.
		rest := strings.TrimPrefix(line, prefix)
		if !strings.HasPrefix(rest, `"`) || !strings.HasSuffix(rest, `"`) {
			t.Errorf("after /c: %q, want it in quotes", rest)
			continue
		}
		rest = rest[1 : len(rest)-1]
		quoted := false
		for _, c := range rest {
			if c == '"' {
				quoted = !quoted
			} else if strings.ContainsRune("&|<>^()", c) && !quoted {
				t.Errorf("%q: cmd.exe sees %q outside quotes", rest, c)
			}
		}
		got := argvW(rest)
		want := append([]string{script}, args...)
		if !slices.Equal(got, want) {
			t.Errorf("BatchCommandLine(%q): the program gets %q, want %q", args, got, want)
		}
	}
	for _, args := range [][]string{
		{`"&calc.exe`}, {"%CMDCMDLINE:~-1%&calc"}, {"!PATH!"}, {"a\nb"}, {"a\rb"}, {"a\x00b"},
	} {
		if line, err := BatchCommandLine(cmdExe, script, args); !errors.Is(err, ErrBatchArg) {
			t.Errorf("BatchCommandLine(%q) = %q, %v; want ErrBatchArg", args, line, err)
		}
	}
	if _, err := BatchCommandLine(cmdExe, `C:\100%\x.cmd`, nil); !errors.Is(err, ErrBatchArg) {
		t.Errorf("a script path with %%: %v, want ErrBatchArg", err)
	}
}

func TestIsBatch(t *testing.T) {
	for path, want := range map[string]bool{
		`C:\npm\npx.cmd`: true, `C:\x\RUN.BAT`: true, `x.Cmd`: true,
		`C:\node\node.exe`: false, `run.bat.`: false, `run.bat.exe`: false, `cmd`: false,
	} {
		if got := IsBatch(path); got != want {
			t.Errorf("IsBatch(%q) = %v, want %v", path, got, want)
		}
	}
}
