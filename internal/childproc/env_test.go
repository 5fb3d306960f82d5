package childproc

import (
	"slices"
	"testing"
)

// The allow-lists keep what programs need on each system and nothing else,
// spelled as the parent spells it; on Windows names match without case.
func TestInherit(t *testing.T) {
	environ := []string{
		"Path=C:\\Windows\\system32;C:\\Program Files\\nodejs",
		"PATHEXT=.COM;.EXE;.BAT;.CMD",
		"SystemRoot=C:\\Windows",
		"=C:=C:\\work", // a per-drive directory: no name
		"APPDATA=C:\\Users\\me\\AppData\\Roaming",
		"LOCALAPPDATA=C:\\Users\\me\\AppData\\Local",
		"USERPROFILE=C:\\Users\\me",
		"TEMP=C:\\Users\\me\\AppData\\Local\\Temp",
		"TMP=C:\\Users\\me\\AppData\\Local\\Temp",
		"ComSpec=C:\\Windows\\system32\\cmd.exe",
		"ProgramFiles=C:\\Program Files",
		"ProgramFiles(x86)=C:\\Program Files (x86)",
		"GITHUB_TOKEN=secret",
		"AWS_SECRET_ACCESS_KEY=secret",
	}
	for _, tc := range []struct {
		name string
		keys []string
		fold bool
		want []string
	}{
		{"windows", windowsEnvKeys, true, []string{
			"Path=C:\\Windows\\system32;C:\\Program Files\\nodejs",
			"PATHEXT=.COM;.EXE;.BAT;.CMD",
			"SystemRoot=C:\\Windows",
			"APPDATA=C:\\Users\\me\\AppData\\Roaming",
			"LOCALAPPDATA=C:\\Users\\me\\AppData\\Local",
			"USERPROFILE=C:\\Users\\me",
			"TEMP=C:\\Users\\me\\AppData\\Local\\Temp",
			"TMP=C:\\Users\\me\\AppData\\Local\\Temp",
			"ComSpec=C:\\Windows\\system32\\cmd.exe",
			"ProgramFiles=C:\\Program Files",
			"ProgramFiles(x86)=C:\\Program Files (x86)",
		}},
		// Unix names are case-sensitive: "Path" is not PATH.
		{"unix", unixEnvKeys, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := inherit(environ, tc.keys, tc.fold); !slices.Equal(got, tc.want) {
				t.Errorf("inherit =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
	unix := []string{"PATH=/usr/bin", "HOME=/home/me", "TMPDIR=/tmp", "LANG=C.UTF-8", "TOKEN=x", "path=/x"}
	if got, want := inherit(unix, unixEnvKeys, false), unix[:4]; !slices.Equal(got, want) {
		t.Errorf("inherit on unix = %q, want %q", got, want)
	}
}

func TestSetLookupEnv(t *testing.T) {
	env := []string{"Path=C:\\a", "TEMP=C:\\t"}
	folded := setEnv(env, "PATH", "C:\\b", true)
	if want := []string{"TEMP=C:\\t", "PATH=C:\\b"}; !slices.Equal(folded, want) {
		t.Errorf("setEnv folding = %q, want %q", folded, want)
	}
	if v, ok := lookupEnv(folded, "path", true); !ok || v != "C:\\b" {
		t.Errorf("lookupEnv(path) folding = %q, %v", v, ok)
	}
	exact := setEnv(env, "PATH", "/b", false)
	if want := []string{"Path=C:\\a", "TEMP=C:\\t", "PATH=/b"}; !slices.Equal(exact, want) {
		t.Errorf("setEnv exact = %q, want %q", exact, want)
	}
	if v, ok := lookupEnv(exact, "Path", false); !ok || v != "C:\\a" {
		t.Errorf("lookupEnv(Path) exact = %q, %v", v, ok)
	}
	if env[0] != "Path=C:\\a" || len(env) != 2 {
		t.Errorf("setEnv changed its input: %q", env)
	}
	if _, ok := lookupEnv(nil, "PATH", true); ok {
		t.Error("lookupEnv found a variable in an empty environment")
	}
}
