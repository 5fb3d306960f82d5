package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/skillgate/skillgate/internal/redact"

	"gopkg.in/yaml.v3"
)

// clientHeaders refuses, as errors, the headers of s (read from the entry
// v named by k) that the config would refuse: see headerProblems.
func (d *decoder) clientHeaders(k, v *yaml.Node, s *Server) {
	hn := lookupKey(v, "headers")
	if hn == nil || hn.Kind != yaml.MappingNode || s.URL == "" {
		return
	}
	var order []string
	for i := 0; i+1 < len(hn.Content); i += 2 {
		order = append(order, hn.Content[i].Value)
	}
	for _, p := range headerProblems(s.Headers, order) {
		at := hn
		for i := 0; i+1 < len(hn.Content); i += 2 {
			if hn.Content[i].Value == p.key {
				at = hn.Content[i]
			}
		}
		d.fail(at, join(k.Value, "headers."+p.key), nil, "%s, then import again", p.msg)
	}
}

// secretFlag matches the names of command-line options (without their
// dashes) whose value is a credential: --token, --api-key.
var secretFlag = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(token|secret|passw|pwd|api[-_]?key|access[-_]?key|private[-_]?key|^key$|^pat$|credential)`)
})

// urlPassword matches a URL with a password (scheme://user:password@),
// anywhere in a value.
var urlPassword = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s/@:]*:([^\s/@]+)@`)
})

// clearPassword returns the first URL in s with a password that is not
// a ${VAR}, masked, and s with that password replaced by ${v}; ok is
// false when there is none.
func clearPassword(s, v string) (shown, want string, ok bool) {
	for _, m := range urlPassword().FindAllStringSubmatchIndex(s, -1) {
		if pw := s[m[2]:m[3]]; literal(pw) != "" {
			return s[:m[2]] + redact.Masked + s[m[3]:], s[:m[2]] + "${" + v + "}" + s[m[3]:], true
		}
	}
	return "", "", false
}

// literal returns what is left of s once its ${VAR} references and an
// auth scheme word (Bearer, Basic, Token) are taken out.
func literal(s string) string {
	s = varRef().ReplaceAllString(s, "")
	for _, w := range []string{"Bearer", "Basic", "Token", "token", "bearer"} {
		if rest, ok := strings.CutPrefix(s, w+" "); ok {
			s = rest
		}
	}
	return strings.TrimSpace(s)
}

// literalSecrets warns about each credential the entry v (named by k)
// writes as it is, not as a ${VAR}: a header such as Authorization, a
// password, a user name long enough to be a key (https://KEY@host) or a
// secret-looking query value in its URL, a secret-looking
// env value. The config then holds the secret in clear; the warning says
// where (with the value masked) and what to write instead.
func (d *decoder) literalSecrets(k, v *yaml.Node, s *Server) {
	name := k.Value
	varFor := func(parts ...string) string {
		return inputVar(strings.Join(append([]string{shortName(parts[0])}, parts[1:]...), "_"))
	}
	note := func(field string, format string, args ...any) {
		at := k
		if p, ok := d.pos[field]; ok {
			at = &yaml.Node{Line: p.Line, Column: p.Col}
		}
		d.warns = append(d.warns, &Error{Pos: d.at(at), Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	for _, h := range slices.Sorted(maps.Keys(s.Headers)) {
		val := s.Headers[h]
		if !redact.CredentialName(h) || literal(val) == "" {
			continue
		}
		shown := strings.Replace(val, literal(val), redact.Masked, 1)
		want := strings.Replace(val, literal(val), "${"+varFor(name, "token")+"}", 1)
		note(join(name, "headers."+h), "holds a literal secret (%s: %q); move it into a variable: write %q and set %s where the gateway runs",
			h, shown, want, varFor(name, "token"))
	}
	if u, err := url.Parse(s.URL); err == nil {
		var what, vars []string
		if pw, ok := u.User.Password(); ok && literal(pw) != "" {
			what, vars = append(what, "a password"), append(vars, "${"+varFor(name, "password")+"}")
		} else if user := u.User.Username(); !ok && len(literal(user)) >= redact.MinSecret {
			what, vars = append(what, "a key in its user name"), append(vars, "${"+varFor(name, "token")+"}")
		}
		for _, q := range slices.Sorted(maps.Keys(u.Query())) {
			if redact.CredentialName(q) && literal(u.Query().Get(q)) != "" {
				what, vars = append(what, "the query value "+q), append(vars, "${"+varFor(name, q)+"}")
			}
		}
		if len(what) > 0 {
			note(join(name, "url"), "holds %s in clear (%s); move it into a variable (%s) and set it where the gateway runs",
				strings.Join(what, " and "), redact.URL(s.URL), strings.Join(vars, ", "))
		}
	}
	for _, e := range slices.Sorted(maps.Keys(s.Env)) {
		val := s.Env[e]
		if (redact.CredentialName(e) && literal(val) != "") || redact.TokenShape(val) {
			note(join(name, "env."+e), "holds a literal secret (%s: %s); move it into a variable: write %s: ${%s} and set %s where the gateway runs",
				e, redact.Masked, e, e, e)
		} else if shown, _, ok := clearPassword(val, e); ok {
			note(join(name, "env."+e), "holds a password in clear (%s: %s); move it into a variable: write %s: ${%s} and set %s where the gateway runs",
				e, shown, e, e, e)
		}
	}
	for i, a := range s.Args {
		field := fmt.Sprintf("%s.args[%d]", name, i)
		flag, val, isFlag := "", a, false
		if i > 0 && !strings.Contains(s.Args[i-1], "=") {
			flag = s.Args[i-1]
		}
		if f, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(f, "-") {
			flag, val, isFlag = f, v, true
		} else if strings.HasPrefix(a, "-") {
			continue
		}
		opt := strings.TrimLeft(flag, "-")
		switch {
		case strings.HasPrefix(flag, "-") && secretFlag().MatchString(opt) && literal(val) != "":
			v := varFor(name, opt)
			show, want := flag+" "+redact.Masked, "${"+v+"}"
			if isFlag {
				show, want = flag+"="+redact.Masked, flag+"=${"+v+"}"
			}
			note(field, "holds a literal secret (%s); move it into a variable: write %q and set %s where the gateway runs", show, want, v)
		case redact.TokenShape(val):
			v := varFor(name, "token")
			note(field, "holds a literal secret (%s); move it into a variable: write %q and set %s where the gateway runs", redact.Masked, "${"+v+"}", v)
		default:
			v := varFor(name, "password")
			if shown, want, ok := clearPassword(a, v); ok {
				note(field, "holds a password in clear (%s); move it into a variable: write %q and set %s where the gateway runs", shown, want, v)
			}
		}
	}
}

// Check parses out, the YAML that MarshalServers or Merge made of im's
// servers, as Parse does, named name, and returns its problems. Those in
// an imported server are placed where im's file wrote them, so that they
// cite the file the user imported (file:line), not YAML they have not seen.
// An editor variable the import kept, and warned about, is not reported
// again as unset.
func (im *Imported) Check(out []byte, name string, lookup func(string) (string, bool)) error {
	_, err := Parse(bytes.NewReader(out), name, lookup)
	if err == nil {
		return nil
	}
	var errs []*Error
	for _, e := range unjoin(err) {
		var ce *Error
		if !errors.As(e, &ce) {
			return err
		}
		if im.warned(ce) {
			continue
		}
		im.place(ce)
		errs = append(errs, ce)
	}
	if len(errs) == 0 {
		return nil
	}
	slices.SortStableFunc(errs, func(a, b *Error) int {
		other := func(e *Error) int {
			if e.Pos.File == im.file {
				return 0
			}
			return 1
		}
		return cmp.Or(cmp.Compare(other(a), other(b)),
			cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	joined := make([]error, len(errs))
	for i, e := range errs {
		joined[i] = e
	}
	return errors.Join(joined...)
}

// warned reports whether e is an editor variable that is not set, which
// the import kept and warned about.
func (im *Imported) warned(e *Error) bool {
	if !errors.Is(e, ErrUndefinedVariable) {
		return false
	}
	for v := range im.kept {
		if strings.Contains(e.Error(), "undefined variable ${"+v+"}") {
			return true
		}
	}
	return false
}

// place moves e to where im's file wrote its field, when e is about an
// imported server.
func (im *Imported) place(e *Error) {
	rest, ok := strings.CutPrefix(e.Field, "servers.")
	if !ok {
		return
	}
	for _, n := range im.Order {
		after, ok := strings.CutPrefix(rest, n)
		if !ok || (after != "" && after[0] != '.' && after[0] != '[') {
			continue
		}
		old := n
		if o, renamed := im.Renamed[n]; renamed {
			old = o
		}
		for f := old + after; ; {
			if p, ok := im.pos[f]; ok {
				e.Pos = p
				return
			}
			i := strings.LastIndexAny(f, ".[")
			if i < len(old) {
				break
			}
			f = f[:i]
		}
		e.Pos = im.Servers[n].Pos
		return
	}
}

// unjoin returns the errors err joins, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
