package catalog

import "strings"

// uriTemplate is a compiled RFC 6570 URI template, for matching only.
type uriTemplate struct {
	parts    []tmplPart
	literals int // literal bytes, for ranking matches
}

// tmplPart is a literal (op == 0) or an expression {op var,...}.
type tmplPart struct {
	op  byte // 0 literal; ' ' simple {var}; else + # / . ; ? &
	lit string
}

func compileTemplate(t string) *uriTemplate {
	ut := &uriTemplate{}
	for t != "" {
		open := strings.IndexByte(t, '{')
		if open < 0 {
			ut.addLiteral(t)
			break
		}
		end := strings.IndexByte(t[open:], '}')
		if end < 0 { // unclosed: the rest is literal
			ut.addLiteral(t)
			break
		}
		ut.addLiteral(t[:open])
		expr := t[open+1 : open+end]
		op := byte(' ')
		if expr != "" && strings.IndexByte("+#/.;?&", expr[0]) >= 0 {
			op = expr[0]
		}
		ut.parts = append(ut.parts, tmplPart{op: op})
		t = t[open+end+1:]
	}
	return ut
}

func (ut *uriTemplate) addLiteral(s string) {
	if s == "" {
		return
	}
	ut.literals += len(s)
	if n := len(ut.parts); n > 0 && ut.parts[n-1].op == 0 {
		ut.parts[n-1].lit += s
		return
	}
	ut.parts = append(ut.parts, tmplPart{lit: s})
}

// stops returns the characters an expression's value cannot contain, and the
// character it starts with (0 for none).
func (p tmplPart) stops() (stop string, lead byte) {
	switch p.op {
	case ' ':
		return "/?#", 0
	case '+':
		return "", 0
	case '#':
		return "", '#'
	case '/':
		return "?#", '/'
	case '.', ';':
		return "/?#", p.op
	default: // ? &
		return "#", p.op
	}
}

// match reports whether uri is an expansion of the template, with the rules
// documented on Snapshot.MatchTemplate. It considers every split of uri, at
// O(parts × len(uri)²) worst case.
// buf is scratch space, reused across calls when large enough; match
// returns it (possibly grown).
func (ut *uriTemplate) match(uri string, buf []bool) (bool, []bool) {
	// Most templates differ in their scheme or first literal: reject those
	// without the full walk.
	if len(ut.parts) > 0 {
		if p := ut.parts[0]; p.op == 0 && !strings.HasPrefix(uri, p.lit) {
			return false, buf
		}
		if p := ut.parts[len(ut.parts)-1]; p.op == 0 && !strings.HasSuffix(uri, p.lit) {
			return false, buf
		}
	}
	n := len(uri)
	if cap(buf) < 2*(n+1) {
		buf = make([]bool, 2*(n+1))
	}
	buf = buf[:2*(n+1)]
	cur, next := buf[:n+1], buf[n+1:]
	clear(cur)
	cur[0] = true
	for _, p := range ut.parts {
		clear(next)
		live := false
		for pos := 0; pos <= n; pos++ {
			if !cur[pos] {
				continue
			}
			if p.op == 0 {
				if strings.HasPrefix(uri[pos:], p.lit) {
					next[pos+len(p.lit)] = true
					live = true
				}
				continue
			}
			stop, lead := p.stops()
			q := pos
			if lead != 0 {
				next[pos] = true // undefined: expands to nothing
				live = true
				if q >= n || uri[q] != lead {
					continue
				}
				q++
				next[q] = true
			}
			for ; q < n && strings.IndexByte(stop, uri[q]) < 0; q++ {
				next[q+1] = true
				live = true
			}
		}
		if !live {
			return false, buf
		}
		cur, next = next, cur
	}
	return cur[n], buf
}

// scheme returns the URI scheme of a URI or URI template, in lower case
// ("" when it has none, or when an expression comes before the ":").
func scheme(uri string) string {
	i := strings.IndexByte(uri, ':')
	if i <= 0 {
		return ""
	}
	for j := 0; j < i; j++ {
		c := uri[j]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || j > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return ""
		}
	}
	return strings.ToLower(uri[:i])
}
