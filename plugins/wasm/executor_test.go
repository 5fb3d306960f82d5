package wasm

import (
	"strings"
	"testing"
)

func TestCommandEcho(t *testing.T) {
	c, _ := startExec(t)
	defs := load(t, c, "cmd", toolFolder(t, StyleCommand, nil))
	if len(defs.Tools) != 1 || !strings.Contains(string(defs.Tools[0]), `"name":"guest"`) {
		t.Fatalf("tools = %s", defs.Tools)
	}
	r, _ := call(t, c, "cmd", `{"op":"echo","text":"hi"}`)
	if r.IsError || r.StructuredContent["echo"] != "hi" {
		t.Fatalf("result = %+v", r)
	}
}

func TestReactorEcho(t *testing.T) {
	c, _ := startExec(t)
	load(t, c, "re", toolFolder(t, StyleReactor, nil))
	for i := 1; i <= 3; i++ {
		r, _ := call(t, c, "re", `{"op":"echo","text":"hi"}`)
		if r.IsError || r.StructuredContent["echo"] != "hi" {
			t.Fatalf("result = %+v", r)
		}
		t.Logf("%+v", r.StructuredContent)
	}
}
