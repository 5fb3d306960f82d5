package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// TestEntryTooLarge: a skill whose files total more than the extension's
// 16 MiB is left out of skills/list with a warning in the log, skills/get
// says why, and EntryProblems (skills validate) names the skill and its
// largest file — all without reading the file.
func TestEntryTooLarge(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"big/SKILL.md":   skillMD("big", "Holds a large file."),
		"small/SKILL.md": skillMD("small", "Holds little."),
	})
	f, err := os.Create(filepath.Join(dir, "big", "assets", "data.bin"))
	if os.IsNotExist(err) {
		os.MkdirAll(filepath.Join(dir, "big", "assets"), 0o755)
		f, err = os.Create(filepath.Join(dir, "big", "assets", "data.bin"))
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxEntryBytes + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	var log bytes.Buffer
	lib := openLib(t, Options{Dirs: []string{dir}, StateDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&log, nil))})
	srv := NewServer(lib)
	ctx := context.Background()

	old := ListCacheAge
	ListCacheAge = 0 // each list builds its page again
	t.Cleanup(func() { ListCacheAge = old })
	for range 2 {
		raw, err := srv.Call(ctx, sdk.CallRequest{Method: "skills/list", Params: json.RawMessage(`{}`)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), "skill://big/") || !strings.Contains(string(raw), "skill://small/SKILL.md") {
			t.Errorf("skills/list: %s", raw)
		}
	}
	if n := strings.Count(log.String(), "skill left out of skills/list"); n != 1 || !strings.Contains(log.String(), "assets/data.bin") {
		t.Errorf("log has %d warnings, want one naming assets/data.bin:\n%s", n, log.String())
	}
	_, err = srv.Call(ctx, sdk.CallRequest{Method: "skills/get", Params: json.RawMessage(`{"uri":"skill://big/SKILL.md"}`)}, nil)
	var re *sdk.RPCError
	if !errors.As(err, &re) || re.Code != sdk.CodeInvalidParams || !strings.Contains(re.Message, "assets/data.bin") {
		t.Errorf("skills/get of big: %v", err)
	}
	probs := EntryProblems(lib.Snapshot())
	if len(probs) != 1 || !strings.Contains(probs[0].String(), "big/SKILL.md") || !strings.Contains(probs[0].Msg, "assets/data.bin") {
		t.Errorf("EntryProblems: %v", probs)
	}
}

// TestEntryDigestKept: a file whose size and modification time did not
// change is not read again for its digest.
func TestEntryDigestKept(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"s/SKILL.md": skillMD("s", "A skill."), "s/ref.md": "aaaa"})
	lib := openLib(t, Options{Dirs: []string{dir}, StateDir: t.TempDir()})
	srv := NewServer(lib)
	sk, _ := lib.Snapshot().Lookup("s")
	first, err := srv.Entry(sk)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "s", "ref.md")
	fi, _ := os.Stat(p)
	os.WriteFile(p, []byte("bbbb"), 0o644)
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	again, _ := srv.Entry(sk)
	if first.Resources[1].Digest != again.Resources[1].Digest {
		t.Errorf("the unchanged file was hashed again: %v then %v", first.Resources, again.Resources)
	}
	touch(t, p)
	changed, _ := srv.Entry(sk)
	if changed.Resources[1].Digest == first.Resources[1].Digest {
		t.Errorf("a changed file kept its digest")
	}
}
