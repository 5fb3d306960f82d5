package redact

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// MinSecret is the length, in bytes, below which a value is not masked:
// masking "1", "true" or "json" everywhere would garble every message,
// and so short a value is no credential worth the name.
const MinSecret = 6

// Secrets masks known values (tokens, passwords, API keys) wherever they
// occur in a text. The zero value masks nothing.
type Secrets struct {
	vals []string // longest first, so a value is masked whole before a part
}

// NewSecrets returns a Secrets for vals. Surrounding spaces are trimmed;
// values shorter than MinSecret and duplicates are left out.
func NewSecrets(vals ...string) Secrets {
	var s Secrets
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if len(v) >= MinSecret && !slices.Contains(s.vals, v) {
			s.vals = append(s.vals, v)
		}
	}
	slices.SortStableFunc(s.vals, func(a, b string) int { return len(b) - len(a) })
	return s
}

// Len is the number of values s masks.
func (s Secrets) Len() int { return len(s.vals) }

// Mask returns text with every value of s replaced by Masked.
func (s Secrets) Mask(text string) string {
	for _, v := range s.vals {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, Masked)
		}
	}
	return text
}

// MaskCut is Mask for a text cut short: it also masks a tail of text that
// is the start of a value (at least 3 bytes of it), which Mask would not
// recognise.
func (s Secrets) MaskCut(text string) string {
	text = s.Mask(text)
	for _, v := range s.vals {
		for n := min(len(v)-1, len(text)); n >= 3; n-- {
			if strings.HasSuffix(text, v[:n]) {
				return text[:len(text)-n] + Masked
			}
		}
	}
	return text
}

// MaskJSON returns raw JSON with every value of s masked as it is spelled
// inside a JSON string: escaped as Go's encoder writes it or as other
// encoders do (with <, > and & left as they are).
func (s Secrets) MaskJSON(raw []byte) []byte {
	out := string(raw)
	for _, v := range s.vals {
		for _, html := range []bool{false, true} {
			var b strings.Builder
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(html)
			_ = enc.Encode(v)
			esc := strings.TrimSuffix(b.String(), "\n")
			out = strings.ReplaceAll(out, esc[1:len(esc)-1], Masked)
		}
	}
	if out == string(raw) {
		return raw
	}
	return []byte(out)
}

// credentialName matches the names of variables, headers and parameters
// that usually hold a credential. PAT (a personal access token) and DSN
// (a data source name, which carries a password or, for Sentry, a key)
// count as words only, so that PATH, PATTERN and DSNAME do not match.
// It compiles on first use, not at every process's start.
var credentialName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(auth|token|secret|passw|passphrase|pwd|(^|[_-])pass($|[_-])|key|credential|private|cookie|session|signature|^sig$|` +
		`(^|[_-])pat($|[_-])|(^|[_-])dsn($|[_-])|conn(ection)?[_-]?str(ing)?)`)
})

// CredentialName reports whether name (an environment variable, a header,
// a query parameter) is one that usually holds a credential: it contains
// TOKEN, SECRET, KEY, PASSWORD, AUTH, CREDENTIAL, PRIVATE, CONNECTION_STRING,
// ... in any case, or the word PAT or DSN. A name such as DATABASE_URL is
// none: its value's password is found by URLSecrets.
func CredentialName(name string) bool { return credentialName().MatchString(name) }

// tokenShape matches the well-known shapes of credentials: GitHub's
// ghp_ and github_pat_, OpenAI's and Anthropic's sk-, Stripe's sk_live_,
// Slack's xoxb-, AWS access key ids, GitLab's glpat-.
var tokenShape = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|sk-[A-Za-z0-9_-]{16,}|[sr]k_(live|test)_[A-Za-z0-9]{16,}|` +
		`xox[abprs]-[A-Za-z0-9-]{10,}|(AKIA|ASIA)[A-Z0-9]{16}|glpat-[A-Za-z0-9_-]{20,})$`)
})

// TokenShape reports whether v has the shape of a well-known credential
// (ghp_..., github_pat_..., sk-..., sk_live_..., xoxb-..., AKIA..., glpat-...).
func TokenShape(v string) bool { return tokenShape().MatchString(v) }

// TokenLike reports whether v looks like a credential by its shape alone:
// a well-known one (TokenShape), or a random-looking string of at least
// 20 bytes of the characters tokens are made of (letters, digits, _ - + / =),
// whose kinds of character (digit, lower, upper case) change often and
// between digits and letters at least four times, as they do in random
// text and not in words, names and version numbers (MyProject2024Release). A path
// (starting with / or .) never is one.
func TokenLike(v string) bool {
	if TokenShape(v) {
		return true
	}
	if len(v) < 20 || v[0] == '/' || v[0] == '.' {
		return false
	}
	class := func(c byte) int {
		switch {
		case c >= '0' && c <= '9':
			return 1
		case c >= 'a' && c <= 'z':
			return 2
		case c >= 'A' && c <= 'Z':
			return 3
		case c == '_' || c == '-' || c == '+' || c == '/' || c == '=':
			return 4
		}
		return 0
	}
	changes, digitChanges := 0, 0
	for i := range len(v) {
		c := class(v[i])
		if c == 0 {
			return false
		}
		if i > 0 && c != class(v[i-1]) {
			changes++
			if c == 1 || class(v[i-1]) == 1 {
				digitChanges++
			}
		}
	}
	return changes >= len(v)/3 && digitChanges >= 4
}
