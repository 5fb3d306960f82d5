// Package toolstore writes tool folders into a tools dir and keeps their
// history: register, update, delete, list versions and roll back. The
// gateway's "tools" admin group and `skillgate tools versions|rollback` use
// it; the gateway's watcher then picks the folders up like any other.
//
// A tool named NAME lives in DIR/NAME. Every change keeps the folder it
// replaces under DIR/.versions/NAME/N, so nothing is ever lost but by
// pruning (the newest Keep versions are kept). The live folder is version
// max(N)+1. A rollback copies an old version back as a new one, so it can
// itself be rolled back; a delete archives the live folder, so a rollback
// restores a deleted tool.
//
// Everything is validated (toolspec) in a temporary folder inside DIR
// before the live folder is touched, and the live folder is replaced with
// one atomic rename (an exchange on Linux), so a watcher never sees a
// half-written tool. File names are jailed: no absolute paths, no "..",
// no symlinks.
//
//	st := toolstore.New("tools")
//	v, err := st.Register(ctx, "hello", toolstore.Change{
//		Tool:  json.RawMessage(`{"description":"Say hello.","runtime":"python","entry":"main.py"}`),
//		Files: map[string]string{"main.py": `print("hello")`},
//	})
//	// v.N == 1; tools/hello/tool.yaml and tools/hello/main.py exist.
//	_, err = st.Rollback(ctx, "hello", 0) // back to the previous version
package toolstore
