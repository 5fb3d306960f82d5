// Package catalog builds the immutable snapshot of everything the gateway
// serves — tools, prompts, resources and resource templates — from each
// source's definitions, with namespaced names and collision handling.
//
// Build turns a set of Sources into a *Snapshot. A Snapshot never changes
// once built, so the hot path (list, find, route) reads it without a lock and
// without I/O. A Store holds the current Snapshot in an atomic pointer;
// writers (SetSource, RemoveSource, Reload, Swap) serialize on a mutex and
// publish a new Snapshot, and readers call Load.
//
// Names. A tool or prompt is exposed as <namespace><separator><name>
// (just <name> when the namespace is ""). Exposed names always match
// ^[a-zA-Z0-9_-]{1,64}$: every other character becomes '_', and a longer name
// keeps its first 55 characters plus '_' and 8 hex digits of the SHA-256 of
// the full name, so it is stable across runs and distinct from its siblings.
// Resource URIs and URI templates are never rewritten: they travel inside
// tool results, and a rewritten URI would break those links.
//
// Collisions never fail a Build; each one is a Conflict in the Snapshot.
// Under the "prefix" policy the earlier source (by Order, then ID) keeps the
// name and the later item is renamed <source id><separator><name>; under
// "priority" the higher Priority keeps it and the other is dropped; under
// "error" the later one is dropped and the Conflict is marked Error. Names
// in Options.Reserved belong to the gateway and are never shadowed.
package catalog
