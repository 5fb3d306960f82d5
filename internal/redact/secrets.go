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
// that usually hold a credential.
// It compiles on first use, not at every process's start.
var credentialName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(auth|token|secret|passw|passphrase|pwd|(^|_)pass($|_)|key|credential|private|cookie|session|signature|^sig$|^pat$)`)
})

// CredentialName reports whether name (an environment variable, a header,
// a query parameter) is one that usually holds a credential: it contains
// TOKEN, SECRET, KEY, PASSWORD, AUTH, CREDENTIAL, PRIVATE, ... in any case.
func CredentialName(name string) bool { return credentialName().MatchString(name) }
