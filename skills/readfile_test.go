package skills

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readPage calls read_skill_file and returns its raw content items.
func readPage(t *testing.T, srv *Server, rel string, offset int64) []map[string]any {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"skill": "files", "path": rel, "offset": offset})
	raw, err := srv.CallTool(context.Background(), ToolReadFile, args, nil)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Content []map[string]any `json:"content"`
		IsError bool             `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.IsError {
		t.Fatalf("read_skill_file %s at %d: %s (%v)", rel, offset, raw, err)
	}
	return r.Content
}

var nextOffset = regexp.MustCompile(`offset: (\d+) for`)

// TestReadFileBinaryPages: a binary file larger than a page comes in
// pages that say they are parts and where the next starts; joined they
// are the file. A text page asked for inside a character starts on the
// next one instead of turning into a blob; a Latin-1 .md reads as text
// with U+FFFD and a note, and resources/read keeps its bytes, saying why.
func TestReadFileBinaryPages(t *testing.T) {
	dir := t.TempDir()
	png := make([]byte, 2500)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range png {
		png[i] = byte(rng.IntN(256))
	}
	copy(png, "\x89PNG\r\n\x1a\n\x00\x00")
	writeTree(t, dir, map[string]string{
		"files/SKILL.md":        skillMD("files", "Files of all kinds."),
		"files/assets/logo.png": string(png),
		"files/notes/utf8.md":   strings.Repeat("é", 600),
		"files/notes/latin1.md": "caf\xe9 cr\xe8me\n",
	})
	srv := NewServer(openLib(t, Options{Dirs: []string{dir}, FileCap: 1000, StateDir: t.TempDir()}))

	var got []byte
	for offset, pages := int64(0), 0; ; pages++ {
		if pages > 5 {
			t.Fatal("more pages than the file has")
		}
		c := readPage(t, srv, "assets/logo.png", offset)
		res, _ := c[0]["resource"].(map[string]any)
		blob, err := base64.StdEncoding.DecodeString(res["blob"].(string))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, blob...)
		if len(got) == len(png) {
			if len(c) < 2 || !strings.Contains(c[1]["text"].(string), "not the whole file") {
				t.Errorf("the last page does not say it is a part: %v", c)
			}
			break
		}
		if len(c) < 2 {
			t.Fatalf("page at %d (%d bytes) does not say it is cut: %v", offset, len(blob), c)
		}
		m := nextOffset.FindStringSubmatch(c[1]["text"].(string))
		if m == nil {
			t.Fatalf("page note %q names no next offset", c[1]["text"])
		}
		offset, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if !bytes.Equal(got, png) {
		t.Errorf("joined pages differ from the file")
	}

	// Offset 1 is inside the first é.
	c := readPage(t, srv, "notes/utf8.md", 1)
	if c[0]["type"] != "text" || !strings.HasPrefix(c[0]["text"].(string), "éé") {
		t.Errorf("utf8.md at offset 1: %v", c[0])
	}

	c = readPage(t, srv, "notes/latin1.md", 0)
	if text, _ := c[0]["text"].(string); c[0]["type"] != "text" || !strings.Contains(text, "caf\uFFFD cr\uFFFDme") || !strings.Contains(text, "not valid UTF-8") {
		t.Errorf("latin1.md: %v", c[0])
	}
	raw, err := srv.readResource(context.Background(), "skill://files/notes/latin1.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"blob":"`+base64.StdEncoding.EncodeToString([]byte("caf\xe9 cr\xe8me\n"))) || !strings.Contains(string(raw), "not valid UTF-8") {
		t.Errorf("resources/read latin1.md: %s", raw)
	}
}
