package skills

import "errors"

// Errors the library returns, wrapped with what and where.
var (
	// ErrUnknownSkill: no skill has that ID or name.
	ErrUnknownSkill = errors.New("unknown skill")
	// ErrBrokenSkill: the skill of that ID, name or folder is not served
	// because its SKILL.md is broken; the error says what and where. It
	// comes with ErrUnknownSkill (errors.Is matches both).
	ErrBrokenSkill = errors.New("broken skill")
	// ErrAmbiguousSkill: several skills have that name; use the ID.
	ErrAmbiguousSkill = errors.New("ambiguous skill name")
	// ErrUnknownSection: the body has no heading by that name.
	ErrUnknownSection = errors.New("unknown section")
	// ErrBadPath: a file path tries to leave the skill folder, or names
	// something that is not a readable file of the skill.
	ErrBadPath = errors.New("bad skill file path")
	// ErrNotFound: the skill has no such file.
	ErrNotFound = errors.New("no such skill file")
	// ErrNotScript: run_skill_script names no file it may run: none
	// there, outside the skill folder, SKILL.md, a hook, a tool folder's.
	ErrNotScript = errors.New("not a script of the skill")
	// ErrNoExecutor: the library has no script executor.
	ErrNoExecutor = errors.New("no script executor")
	// ErrTooLarge: a skill's files total more than the skills extension
	// lists for one skill.
	ErrTooLarge = errors.New("skill too large")
	// ErrDenied: a pre hook refused the run.
	ErrDenied = errors.New("denied by a hook")
)
