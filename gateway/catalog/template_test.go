package catalog

import (
	"encoding/json"
	"testing"

	"github.com/skillgate/skillgate/plugins/sdk"
)

func TestMatchTemplate(t *testing.T) {
	templates := []string{
		"file:///{+path}",
		"file:///docs/{name}",
		"file:///notes/{name}.txt",
		"users://{id}/profile",
		"repo://{owner}/{repo}/blob{/path}",
		"search://q{?query,limit}",
		"page://doc{#section}",
		"img://{name}{.ext}",
		"config://app",
		"broken://{x",
	}
	var raws []json.RawMessage
	for _, tmpl := range templates {
		b, _ := json.Marshal(map[string]string{"uriTemplate": tmpl, "name": "t"})
		raws = append(raws, b)
	}
	s := Build([]Source{{ID: "a", Defs: sdk.Definitions{ResourceTemplates: raws}}}, Options{})

	tests := []struct {
		uri  string
		want string // "" = no match
	}{
		{"file:///docs/readme", "file:///docs/{name}"}, // more literal text wins over {+path}
		{"file:///docs/a/b", "file:///{+path}"},        // {name} stays in one segment
		{"file:///x/y/z.go", "file:///{+path}"},
		{"file:///", ""},                                      // vars match at least one character
		{"file:///notes/a.b.txt", "file:///notes/{name}.txt"}, // a var runs up to the literal that completes the match
		{"file:///notes/a.md", "file:///{+path}"},
		{"users://42/profile", "users://{id}/profile"},
		{"users:///profile", ""},
		{"users://42/settings", ""},
		{"users://4/2/profile", ""},
		{"repo://o/r/blob", "repo://{owner}/{repo}/blob{/path}"},
		{"repo://o/r/blob/src/main.go", "repo://{owner}/{repo}/blob{/path}"},
		{"repo://o/r/blobx", ""},
		{"search://q", "search://q{?query,limit}"},
		{"search://q?query=go&limit=5", "search://q{?query,limit}"},
		{"search://qx", ""},
		{"page://doc#intro", "page://doc{#section}"},
		{"page://doc", "page://doc{#section}"},
		{"img://cat.png", "img://{name}{.ext}"},
		{"img://cat", "img://{name}{.ext}"},
		{"config://app", "config://app"},
		{"config://app2", ""},
		{"broken://{x", "broken://{x"},
		{"broken://y", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			it, ok := s.MatchTemplate(tt.uri)
			got := ""
			if ok {
				got = it.Name
			}
			if got != tt.want {
				t.Errorf("MatchTemplate(%q) = %q, want %q", tt.uri, got, tt.want)
			}
		})
	}
}
