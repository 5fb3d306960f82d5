package frontend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/skillgate/skillgate/gateway/catalog"
	"github.com/skillgate/skillgate/gateway/disclosure"
)

// Publishing a catalog snapshot. mcp-go's typed path (stdio, and requests
// the HTTP fast paths leave to it) dispatches tools/call and prompts/get
// through its own registry, so tools and prompts are registered with it by
// name. Every registry change of mcp-go sends list_changed to every session
// — one per call — so Publish makes at most one such call per kind:
// additions alone are added, removals alone removed, and both at once
// replace the whole set.
//
// Resources are not registered one by one: a single template registered
// at New (anyResource) matches every URI, and its handler finds the
// resource or template in the snapshot. So the front end itself tells
// sessions that resources changed, after the snapshot is served. Only a
// URI the catch-all cannot match (one with a space, say, which a URI may
// not hold but some servers list anyway), and a template with such
// literal text, is registered by itself.

// registry is what Publish registered with mcp-go.
type registry struct {
	meta    []server.ServerTool       // the meta-tools, registered at New
	tools   map[string]registeredTool // by exposed name
	prompts map[string]registeredPrompt
	// odd holds the resources registered by URI (see oddURI), with their
	// definitions; oddTemplates the templates registered by URI template.
	// A template stays registered once it was (its handler finds nothing
	// in the snapshot when it is gone): mcp-go removes templates only by
	// replacing them all, the catch-all with them.
	odd          map[string]registeredResource
	oddTemplates map[string]bool
}

// registeredTool is a tool as Publish registered it with mcp-go.
type registeredTool struct {
	raw     []byte // the catalog item's definition
	headers bool   // some parameter is bound to a header
	// tool is what mcp-go holds under the name: nil when it refused this
	// definition and every earlier one (an earlier one it took stays).
	tool *server.ServerTool
}

// registeredPrompt is a prompt as Publish registered it with mcp-go.
type registeredPrompt struct {
	raw    []byte
	prompt server.ServerPrompt
}

// registeredResource is a resource as Publish registered it with mcp-go.
type registeredResource struct {
	raw      []byte
	resource server.ServerResource
}

// Update makes the front end serve snap, as Publish(snap, nil) does.
func (s *Server) Update(snap *catalog.Snapshot) { s.Publish(snap, nil) }

// SetDisclosure replaces the disclosure rules (a configuration reload), as
// Publish(nil, d) does.
func (s *Server) SetDisclosure(d *disclosure.Disclosure) { s.Publish(nil, d) }

// Publish makes the front end serve snap (nil: the snapshot it serves)
// under the disclosure rules d (nil: the rules it serves) as one change:
// each client with a session is sent one list_changed for each kind of
// list that changed, and none for a kind that did not. New rules keep
// each session's activations that they still serve (Disclosure.Adopt);
// they change the tools of every client when an endpoint lists other tools
// without activations under them, else only of the sessions whose
// activations they changed, each sent its own list_changed; and the
// prompts or resources when an endpoint serves others under them. Calls
// never see a listed item they cannot
// reach: new items are registered before the snapshot is served, gone ones
// removed after (when an update both adds and removes tools or prompts,
// mcp-go's set of them is replaced at once, before). Publishes are
// serialized.
func (s *Server) Publish(snap *catalog.Snapshot, d *disclosure.Disclosure) {
	s.updateMu.Lock()
	defer s.updateMu.Unlock()
	old := s.snap.Load()
	if snap == nil {
		snap = old
	}
	toolsChanged := !bytes.Equal(old.ToolsJSON(), snap.ToolsJSON())
	promptsChanged := !bytes.Equal(old.PromptsJSON(), snap.PromptsJSON())
	resourcesChanged := !bytes.Equal(old.ResourcesJSON(), snap.ResourcesJSON()) ||
		!bytes.Equal(old.ResourceTemplatesJSON(), snap.ResourceTemplatesJSON())

	// Register first: a listed item is always callable. told records the
	// kinds mcp-go tells sessions about itself, now or with a removal.
	var told [3]bool
	var removals []func()
	var adopted []string // sessions whose activated lists new rules changed
	if toolsChanged {
		var remove func()
		told[0], remove = s.syncTools(snap)
		removals = append(removals, remove)
	}
	if promptsChanged {
		var remove func()
		told[1], remove = s.syncPrompts(snap)
		removals = append(removals, remove)
	}
	if resourcesChanged {
		var remove func()
		told[2], remove = s.syncResources(snap)
		removals = append(removals, remove)
	}
	if d != nil {
		// New rules may also change which prompts and resources an
		// endpoint serves (a profile's servers: or skills:).
		prev := s.disc.Swap(d)
		adopted = d.Adopt(prev, snap)
		toolsChanged = toolsChanged || d.BaseChanged(prev, snap)
		promptsChanged = promptsChanged || d.OthersChanged(prev, snap, catalog.Prompt)
		resourcesChanged = resourcesChanged || d.OthersChanged(prev, snap, catalog.Resource, catalog.ResourceTemplate)
	}
	s.snap.Store(snap)
	// Then drop what is gone.
	for _, remove := range removals {
		if remove != nil {
			remove()
		}
	}
	changed := [3]bool{toolsChanged, promptsChanged, resourcesChanged}
	methods := [3]mcp.MCPMethod{mcp.MethodNotificationToolsListChanged, mcp.MethodNotificationPromptsListChanged, mcp.MethodNotificationResourcesListChanged}
	for i := range changed {
		if changed[i] && !told[i] {
			s.mcp.SendNotificationToAllClients(string(methods[i]), nil)
		}
	}
	if !toolsChanged {
		for _, id := range adopted {
			if err := s.mcp.SendNotificationToSpecificClient(id, string(mcp.MethodNotificationToolsListChanged), nil); err != nil {
				s.log.Debug("tools list_changed not delivered", "session", id, "err", err)
			}
		}
	}
	if toolsChanged || promptsChanged || resourcesChanged || len(adopted) > 0 {
		s.notified.Add(1)
	}
}

// syncTools registers snap's new and changed tools with mcp-go, or
// returns (as remove) the removal of its gone ones, to run once snap is
// served. Only tools that are new or changed are converted for mcp-go: a
// source's reload leaves the other sources' tools as they were, and
// turning a definition into mcp-go's Tool (and mcp-go checking it) is
// most of what a publish costs. told reports whether mcp-go tells
// sessions the tools changed.
func (s *Server) syncTools(snap *catalog.Snapshot) (told bool, remove func()) {
	prev := s.reg.tools
	next := make(map[string]registeredTool, len(snap.Tools()))
	bound := map[string]bool{}
	var adds []server.ServerTool
	for _, it := range snap.Tools() {
		if r, ok := prev[it.Name]; ok && bytes.Equal(r.raw, it.Raw) {
			next[it.Name] = r
			if r.headers {
				bound[it.Name] = true
			}
			continue
		}
		t, err := toolFromRaw(it)
		if err != nil {
			s.log.Warn("tool definition not served", "tool", it.Name, "source", it.Source, "err", err)
			continue
		}
		st := &server.ServerTool{Tool: t, Handler: s.toolHandler(it.Name)}
		headers := mayBindHeaders(it.Raw) && len(mcp.ExtractParamHeaderBindings(&t)) > 0
		next[it.Name] = registeredTool{raw: it.Raw, headers: headers, tool: st}
		adds = append(adds, *st)
		if headers {
			bound[it.Name] = true
		}
	}
	var gone []string
	for name, r := range prev {
		if _, ok := next[name]; !ok && r.tool != nil {
			gone = append(gone, name)
		}
	}
	switch {
	case len(adds) > 0 && len(gone) == 0:
		refused, ok := s.registerTools(adds, false)
		for name := range refused {
			r := next[name]
			r.tool = prev[name].tool // mcp-go keeps what it had
			next[name] = r
		}
		told = ok
	case len(adds) > 0:
		all := append([]server.ServerTool(nil), s.reg.meta...)
		for _, r := range next {
			if r.tool != nil {
				all = append(all, *r.tool)
			}
		}
		refused, ok := s.registerTools(all, true)
		for name := range refused {
			r := next[name]
			r.tool = nil
			next[name] = r
		}
		told = ok
	case len(gone) > 0:
		told, remove = true, func() { s.mcp.DeleteTools(gone...) }
	}
	s.reg.tools = next
	s.headerBound.Store(&bound)
	return told, remove
}

// registerTools adds tools to mcp-go's, or (replace) makes them its whole
// set. mcp-go panics on a tool whose x-mcp-header annotations it refuses
// (on a non-primitive property, a header name used twice), and then
// registers none of them: one upstream's tool must neither take the
// gateway down nor keep the other tools out. So the tools are checked with
// mcp-go's own validator and registered again without the refused ones,
// each left out with the reason. ok reports whether mcp-go took the rest
// (and told sessions so).
func (s *Server) registerTools(tools []server.ServerTool, replace bool) (refused map[string]bool, ok bool) {
	register := s.mcp.AddTools
	if replace {
		register = s.mcp.SetTools
	}
	if recovered(func() { register(tools...) }) == nil {
		return nil, true
	}
	refused = map[string]bool{}
	good := make([]server.ServerTool, 0, len(tools))
	for _, t := range tools {
		if err := mcp.ValidateParamHeaderAnnotations(&t.Tool); err != nil {
			s.log.Warn("tool definition not served: a 2026-07-28 client could not use its x-mcp-header annotations",
				"tool", t.Tool.Name, "err", err)
			refused[t.Tool.Name] = true
			continue
		}
		good = append(good, t)
	}
	if err := recovered(func() { register(good...) }); err != nil {
		s.log.Error("tool definitions not served: mcp-go refused them", "tools", len(good), "err", err)
		return refused, false
	}
	return refused, true
}

// recovered runs f, turning a panic into an error.
func recovered(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}

// syncPrompts is syncTools for prompts.
func (s *Server) syncPrompts(snap *catalog.Snapshot) (told bool, remove func()) {
	prev := s.reg.prompts
	next := make(map[string]registeredPrompt, len(snap.Prompts()))
	var adds []server.ServerPrompt
	for _, it := range snap.Prompts() {
		if r, ok := prev[it.Name]; ok && bytes.Equal(r.raw, it.Raw) {
			next[it.Name] = r
			continue
		}
		var p mcp.Prompt
		if err := json.Unmarshal(it.Raw, &p); err != nil {
			s.log.Warn("prompt definition not served", "prompt", it.Name, "source", it.Source, "err", err)
			continue
		}
		p.Name = it.Name
		sp := server.ServerPrompt{Prompt: p, Handler: s.promptHandler(it.Name)}
		next[it.Name] = registeredPrompt{raw: it.Raw, prompt: sp}
		adds = append(adds, sp)
	}
	var gone []string
	for name := range prev {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	switch {
	case len(adds) > 0 && len(gone) == 0:
		s.mcp.AddPrompts(adds...)
		told = true
	case len(adds) > 0:
		// mcp-go empties its prompts before adding the new set: a
		// prompts/get in that instant finds none.
		all := make([]server.ServerPrompt, 0, len(next))
		for _, r := range next {
			all = append(all, r.prompt)
		}
		s.mcp.SetPrompts(all...)
		told = true
	case len(gone) > 0:
		told, remove = true, func() { s.mcp.DeletePrompts(gone...) }
	}
	s.reg.prompts = next
	return told, remove
}

// syncResources registers with mcp-go the resources and templates the
// catch-all cannot reach (see oddURI), as syncTools does tools.
func (s *Server) syncResources(snap *catalog.Snapshot) (told bool, remove func()) {
	prev := s.reg.odd
	next := map[string]registeredResource{}
	var adds []server.ServerResource
	for _, it := range snap.Resources() {
		if !oddURI(it.Name) {
			continue
		}
		if r, ok := prev[it.Name]; ok && bytes.Equal(r.raw, it.Raw) {
			next[it.Name] = r
			continue
		}
		var r mcp.Resource
		if err := json.Unmarshal(it.Raw, &r); err != nil {
			s.log.Warn("resource definition not served", "uri", it.Name, "source", it.Source, "err", err)
			continue
		}
		sr := server.ServerResource{Resource: r, Handler: s.resourceHandler()}
		next[it.Name] = registeredResource{raw: it.Raw, resource: sr}
		adds = append(adds, sr)
	}
	var gone []string
	for uri := range prev {
		if _, ok := next[uri]; !ok {
			gone = append(gone, uri)
		}
	}
	switch {
	case len(adds) > 0 && len(gone) == 0:
		s.mcp.AddResources(adds...)
		told = true
	case len(adds) > 0:
		all := make([]server.ServerResource, 0, len(next))
		for _, r := range next {
			all = append(all, r.resource)
		}
		s.mcp.SetResources(all...)
		told = true
	case len(gone) > 0:
		told, remove = true, func() { s.mcp.DeleteResources(gone...) }
	}
	s.reg.odd = next

	var templates []server.ServerResourceTemplate
	for _, it := range snap.ResourceTemplates() {
		if s.reg.oddTemplates[it.Name] || !oddURI(literalText(it.Name)) {
			continue
		}
		var rt mcp.ResourceTemplate
		if err := json.Unmarshal(it.Raw, &rt); err != nil {
			s.log.Warn("resource template not served", "uri", it.Name, "source", it.Source, "err", err)
			continue
		}
		if s.reg.oddTemplates == nil {
			s.reg.oddTemplates = map[string]bool{}
		}
		s.reg.oddTemplates[it.Name] = true
		templates = append(templates, server.ServerResourceTemplate{Template: rt, Handler: server.ResourceTemplateHandlerFunc(s.resourceHandler())})
	}
	if len(templates) > 0 {
		// A second list_changed for resources, if odd resources changed
		// too: both are rare.
		s.mcp.AddResourceTemplates(templates...)
		told = true
	}
	return told, remove
}

// anyResourceTemplate is the URI template of the catch-all: reserved
// expansion, which matches every string of the characters a URI may hold.
const anyResourceTemplate = "{+uri}"

// anyResource is the catch-all resource template registered with mcp-go.
// It never reaches a client: lists are the snapshot's.
func anyResource() mcp.ResourceTemplate {
	return mcp.NewResourceTemplate(anyResourceTemplate, "skillgate-any-resource")
}

// anyResourceRE matches what the catch-all matches.
var anyResourceRE = sync.OnceValue(func() interface{ MatchString(string) bool } {
	return anyResource().URITemplate.Regexp()
})

// oddURI reports whether mcp-go cannot send a read of uri to the
// catch-all.
func oddURI(uri string) bool { return !anyResourceRE().MatchString(uri) }

// literalText is a URI template without its expressions.
func literalText(tmpl string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(tmpl, '{')
		if open < 0 {
			return b.String() + tmpl
		}
		end := strings.IndexByte(tmpl[open:], '}')
		if end < 0 {
			return b.String() + tmpl
		}
		b.WriteString(tmpl[:open])
		tmpl = tmpl[open+end+1:]
	}
}
