// Package skills serves folders of skills in Claude's format — a
// <skill>/SKILL.md with YAML frontmatter, optional scripts/ and
// references/ — level by level, so a client pays only for what it uses:
//
//  1. a card per skill (Snapshot.Find, about 30 tokens each),
//  2. a skill's body, or one heading's section of it (Library.Body,
//     Library.Section),
//  3. a file of the skill, jailed to its folder (Library.ReadFile),
//  4. a run of one of its scripts through the script executor, with the
//     skill's execution policy and hooks (Library.RunScript).
//
// skillgate adds to the format: tags, version, requires (skills, servers,
// services, tools activated with the skill), execution and scripts
// (timeouts per script), tools/ and pipelines/ folders loaded as the
// skill's own tools, and hooks/pre.* and hooks/post.* run around scripts.
// A skill written for Claude loads unchanged.
//
// Discovery reads only frontmatter (the first 16 KB of each SKILL.md).
// The index is an immutable Snapshot swapped atomically; a refresh (file
// watcher, or a periodic stat check that costs one stat per skill and
// allocates nothing when the tree is unchanged) builds the next one off
// the request path. A broken SKILL.md is reported in Snapshot.Problems and
// never hides the other skills.
//
//	lib, err := skills.Open(ctx, skills.Options{Dirs: []string{"./skills"}, Executor: scriptExecutor})
//	if err != nil { ... }
//	go lib.Run(ctx) // keep it current
//	for _, m := range lib.Snapshot().Find("fill a pdf form", "") {
//		fmt.Println(m.Skill.Card())
//	}
//	sk, _ := lib.Lookup("pdf-forms")
//	body, sections, _ := lib.Body(sk)
//
// The gateway serves all of this as meta-tools, prompts and skill://
// resources through Server (an sdk.Executor run in process); Server.Scope
// narrows what a request sees (a profile's skills).
package skills
