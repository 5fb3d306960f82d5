package catalog

import (
	"encoding/json"
	"fmt"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// Kind is the kind of a catalog item.
type Kind uint8

// The kinds of items a catalog holds. The zero Kind marks a Conflict about a
// whole source (a repeated source ID).
const (
	Tool Kind = iota + 1
	Prompt
	Resource
	ResourceTemplate
)

// String returns the kind as the CLI shows it.
func (k Kind) String() string {
	switch k {
	case Tool:
		return "tool"
	case Prompt:
		return "prompt"
	case Resource:
		return "resource"
	case ResourceTemplate:
		return "resource_template"
	default:
		return "source"
	}
}

// MarshalText makes a Kind encode as its name, e.g. in JSON.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Collision policies for Options.Policy.
const (
	PolicyPrefix   = "prefix"
	PolicyPriority = "priority"
	PolicyError    = "error"
)

// MetaSkill is the _meta key naming the skill of an item of a source with
// SkillFromMeta.
const MetaSkill = "skillgate/skill"

// DefaultSeparator joins a namespace and a name when Options.Separator is empty.
const DefaultSeparator = "__"

// Source is one provider of definitions: an upstream MCP server, a tool
// folder, a pipeline set.
type Source struct {
	// ID identifies the source, e.g. "everything" or "tools/hello". IDs are
	// unique; Build keeps the first of a repeated ID and reports the rest.
	ID string
	// Executor names the executor that serves the source's calls.
	Executor string
	// Namespace prefixes the source's tool and prompt names; "" means none.
	Namespace string
	// Priority decides collisions under the "priority" policy; higher wins.
	Priority int
	// Order is the source's position in the configuration; it breaks ties.
	Order int
	// Group, when set, names the group (such as "admin") the source's tools
	// belong to: they stay hidden from tools/list until a client activates
	// the group as @<group>.
	Group string
	// Skill names the skill whose folder the source comes from, if any.
	Skill string
	// SkillFromMeta makes each item's skill the one its definition names
	// in _meta[MetaSkill] (Skill when it names none): for a source that
	// serves several skills, such as the skills server's prompts and
	// resources. Its prompts, resources and resource templates that name
	// no skill (with Skill "") belong to every skill (Item.EverySkill),
	// such as the skills server's skill://{+path} template. Set it only for
	// sources the gateway trusts, since a profile's skills: serve the items
	// that name them.
	SkillFromMeta bool
	// Defs is what the source offers, as raw MCP JSON objects.
	Defs sdk.Definitions
}

// Options control naming and collisions.
type Options struct {
	// Separator joins a namespace and a name; "" means DefaultSeparator.
	Separator string
	// Policy is PolicyPrefix (the default, also used for "" and unknown
	// values), PolicyPriority or PolicyError.
	Policy string
	// Reserved lists names the gateway keeps for its own tools and prompts
	// (the meta-tools). No source item is ever exposed under one of them.
	Reserved []string
	// ReservedSchemes maps a URI scheme (lower case, without "://") to the
	// ID of the only source whose resources and resource templates may use
	// it, such as "skill" to the gateway's skills. Another source's
	// resource or template in that scheme is dropped (a Conflict), and
	// MatchTemplate matches a URI of the scheme only against the owner's
	// templates: no upstream can answer for, or listen in on, its URIs.
	ReservedSchemes map[string]string
}

func (o Options) normalized() Options {
	if o.Separator == "" {
		o.Separator = DefaultSeparator
	}
	switch o.Policy {
	case PolicyPriority, PolicyError:
	default:
		o.Policy = PolicyPrefix
	}
	return o
}

// Item is one tool, prompt, resource or resource template of a Snapshot.
// Items are shared by every reader of a Snapshot and must not be modified.
type Item struct {
	Kind Kind
	// Name is the exposed name of a tool or prompt, or the URI (template)
	// of a resource (template).
	Name string
	// Original is the source's own name or URI: what a call is routed with.
	Original string
	// Source is the ID of the source that provides the item.
	Source string
	// Executor is the source's executor.
	Executor string
	// Group is the source's Group.
	Group string
	// Skill is the source's Skill, or the item's _meta[MetaSkill] when the
	// source has SkillFromMeta.
	Skill string
	// EverySkill says that the item, a prompt, resource or resource
	// template of a SkillFromMeta source that names no skill, belongs to
	// every skill of the source: an endpoint serving any skill serves it.
	// The source itself scopes what it gives through it (the skills server
	// reads only the files of the skills the endpoint serves).
	EverySkill bool
	// Raw is the definition exactly as the source sent it, except that the
	// top-level "name" member of a tool or prompt holds Name. Every other
	// byte — whitespace, key order, fields this gateway does not know — is
	// kept. Resources and resource templates are unchanged.
	Raw json.RawMessage
	// Title and Description are parsed from Raw once, for search and the CLI.
	// Title falls back to annotations.title for tools and to the "name"
	// member for resources and templates.
	Title       string
	Description string

	tmpl *uriTemplate // compiled, for resource templates
}

// Conflict reports an item that did not get the name it asked for, or was
// left out of the catalog.
type Conflict struct {
	Kind Kind `json:"kind"`
	// Name is the contested exposed name or URI; empty for a skipped item.
	Name string `json:"name"`
	// Winner is the ID of the source that kept Name; empty when the gateway
	// reserves it or for a skipped item.
	Winner string `json:"winner"`
	// Loser is the ID of the source whose item was renamed, dropped or skipped.
	Loser string `json:"loser"`
	// Policy is the collision policy in force.
	Policy string `json:"policy"`
	// Resolution says what happened, e.g. "renamed to github__search",
	// "dropped: lower priority", "dropped: collision policy is error",
	// "renamed: reserved name", "skipped: missing name".
	Resolution string `json:"resolution"`
	// Original is the name the loser's source gave the item, for the
	// problems of one source's own definitions (see Own).
	Original string `json:"original,omitempty"`
	// Renamed is the loser's new exposed name, when it was renamed.
	Renamed string `json:"renamed,omitempty"`
	// Error is set when the policy is "error" and an item was dropped.
	Error bool `json:"error,omitempty"`
}

// Own reports whether c is a problem of one source's own definitions (a
// name listed twice or missing, a name that is not a valid tool name, a
// tool without an inputSchema) rather than a collision between sources:
// Loser's author fixes it, and String says how.
func (c Conflict) Own() bool {
	switch c.Resolution {
	case resSkipped, resDuplicate, resInvalidName, resNoSchema, resReservedScheme, resTooDeep:
		return true
	}
	return false
}

// Unreadable reports whether c is a definition the catalog skipped as
// unreadable: not a JSON object, or without its name (uri for a
// resource). c does not say which of the source's definitions it was, nor
// why: a caller that has the definitions tells that better.
func (c Conflict) Unreadable() bool { return c.Resolution == resSkipped }

// String says what happened to the item and, for a problem of the source's
// own definitions (Own), what to fix.
func (c Conflict) String() string {
	kind := c.Kind.String()
	switch c.Resolution {
	case resSkipped:
		field := "name"
		switch c.Kind {
		case Resource:
			field = "uri"
		case ResourceTemplate:
			field = "uriTemplate"
		}
		return fmt.Sprintf("source %s listed a %s without a %s, or one that is not a JSON object; it is dropped: fix its definition in the source", c.Loser, kind, field)
	case resDuplicate:
		return fmt.Sprintf("source %s listed %s %s twice; the second is dropped: give each %s of the source its own name", c.Loser, kind, c.Original, kind)
	case resInvalidName:
		return fmt.Sprintf("source %s: %s name %q is not a valid name (only letters, digits, _ and -, at most %d characters in all); it is served as %s: rename it in the source",
			c.Loser, kind, c.Original, maxName, c.Renamed)
	case resReservedScheme:
		return fmt.Sprintf("source %s: %s %s uses the %s:// scheme, which the gateway keeps for its own; it is dropped: give it another scheme in the source",
			c.Loser, kind, c.Original, scheme(c.Original))
	case resTooDeep:
		return fmt.Sprintf("source %s: %s %s nests deeper than %d levels, which clients cannot walk; it is dropped: flatten its definition in the source",
			c.Loser, kind, c.Original, MaxDepth)
	case resNoSchema:
		return fmt.Sprintf("source %s: tool %s has no inputSchema, which MCP requires (clients drop such a tool); it is served with %s: give it an inputSchema in the source",
			c.Loser, c.Original, emptySchema)
	}
	if c.Winner == "" {
		return fmt.Sprintf("%s %s of source %s: %s", kind, c.Name, c.Loser, c.Resolution)
	}
	return fmt.Sprintf("%s %s: source %s wins over %s (%s)", kind, c.Name, c.Winner, c.Loser, c.Resolution)
}

// Mapping is one exposed name and where it comes from; `skillgate tools list`
// shows it so users can see shortened and renamed names.
type Mapping struct {
	Exposed  string
	Source   string
	Original string
	Kind     Kind
}

// Snapshot is an immutable catalog. All methods are safe for concurrent use
// without locking. Returned slices and byte slices are shared and must not
// be modified.
type Snapshot struct {
	version uint64

	tools, prompts, resources, templates []*Item
	toolByName, promptByName             map[string]*Item
	resourceByURI                        map[string]*Item
	matchOrder                           []*Item           // templates, most specific first
	schemes                              map[string]string // Options.ReservedSchemes

	toolsJSON, promptsJSON, resourcesJSON, templatesJSON []byte

	conflicts []Conflict
	sources   []string
	mapping   []Mapping
}

// Version is the Store's publication number of the snapshot: 0 for a
// snapshot that has not gone through a Store, then 1, 2, ... per publication.
func (s *Snapshot) Version() uint64 { return s.version }

// Tools returns the tools ordered by exposed name.
func (s *Snapshot) Tools() []*Item { return s.tools }

// Tool finds a tool by exposed name.
func (s *Snapshot) Tool(name string) (*Item, bool) {
	it, ok := s.toolByName[name]
	return it, ok
}

// Prompts returns the prompts ordered by exposed name.
func (s *Snapshot) Prompts() []*Item { return s.prompts }

// Prompt finds a prompt by exposed name.
func (s *Snapshot) Prompt(name string) (*Item, bool) {
	it, ok := s.promptByName[name]
	return it, ok
}

// Resources returns the resources ordered by URI.
func (s *Snapshot) Resources() []*Item { return s.resources }

// Resource finds a resource by its exact URI.
func (s *Snapshot) Resource(uri string) (*Item, bool) {
	it, ok := s.resourceByURI[uri]
	return it, ok
}

// ResourceTemplates returns the resource templates ordered by URI template.
func (s *Snapshot) ResourceTemplates() []*Item { return s.templates }

// MatchTemplate finds the resource template that uri expands from. It is
// simple matching, not full RFC 6570 reverse expansion: literal text matches
// itself; {var} (and {a,b}) matches one or more characters other than / ? #;
// {+var} one or more of any character; {/var} "/" and then anything up to
// ? or #; {.var} and {;var} their lead character and anything up to / ? or #;
// {?var} and {&var} their lead character and anything up to #; {#var} "#"
// and the rest — these operator forms may also match nothing. A var ends
// wherever the rest of the template still matches. When several templates
// match, the one with the most literal characters wins, then the smallest
// template string. A URI of a scheme in Options.ReservedSchemes matches
// only the templates of the source that owns the scheme.
func (s *Snapshot) MatchTemplate(uri string) (*Item, bool) {
	var buf []bool
	owner, reserved := s.schemes[scheme(uri)]
	for _, it := range s.matchOrder {
		if reserved && it.Source != owner {
			continue
		}
		var ok bool
		if ok, buf = it.tmpl.match(uri, buf); ok {
			return it, true
		}
	}
	return nil, false
}

// ToolsJSON returns the JSON array of the tools' Raw values in Tools order,
// encoded once at Build and compacted to one line, ready for tools/list.
func (s *Snapshot) ToolsJSON() []byte { return s.toolsJSON }

// PromptsJSON is ToolsJSON for prompts.
func (s *Snapshot) PromptsJSON() []byte { return s.promptsJSON }

// ResourcesJSON is ToolsJSON for resources.
func (s *Snapshot) ResourcesJSON() []byte { return s.resourcesJSON }

// ResourceTemplatesJSON is ToolsJSON for resource templates.
func (s *Snapshot) ResourceTemplatesJSON() []byte { return s.templatesJSON }

// Conflicts returns every collision and skipped item of the Build, in the
// order they were decided.
func (s *Snapshot) Conflicts() []Conflict { return s.conflicts }

// Sources returns the IDs of the sources built into the snapshot, by Order
// then ID.
func (s *Snapshot) Sources() []string { return s.sources }

// Mapping returns every item's exposed name and origin, by Kind then
// exposed name.
func (s *Snapshot) Mapping() []Mapping { return s.mapping }
