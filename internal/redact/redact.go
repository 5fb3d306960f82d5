// Package redact masks credentials before they are shown in an error, a
// log line or a status. URL masks what a URL may carry (a userinfo
// password, query values such as ?api_key=...); Secrets masks known values
// wherever they occur, as the mcp executor (plugins/mcp) does with the
// values of a remote server's headers and with the secret values of a
// stdio server's env (those named like a credential, see CredentialName,
// and those the config wrote as ${VAR}), at least MinSecret bytes long.
// Config errors and the gateway's logs mask alike.
//
//	redact.URL("https://bob:pw@host/mcp?key=k")              // "https://bob:xxxxx@host/mcp?key=xxxxx"
//	redact.NewSecrets("tok-123456").Mask("token tok-123456") // "token xxxxx"
package redact

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// Masked is what a hidden password or query value is replaced with.
const Masked = "xxxxx"

// URL returns raw with its userinfo password and every query value
// replaced by Masked, or raw itself when it holds neither. A URL that does
// not parse is masked by its shape: what sits between "scheme://user:" and
// "@", and each value after "?" up to the next & or #.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return byShape(raw)
	}
	changed := false
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), Masked)
		changed = true
	}
	if u.RawQuery != "" {
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			return byShape(raw)
		}
		for _, vs := range q {
			for i := range vs {
				vs[i] = Masked
			}
		}
		u.RawQuery = q.Encode()
		changed = true
	}
	if !changed {
		return raw
	}
	return u.String()
}

// The shapes byShape masks, compiled on first use (a URL that does not
// parse is rare), not at every process's start.
var (
	passwordRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([^:/?#]*://[^:@/?#]*:)[^@/?#]*@`) })
	queryRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([?&][^=&#]*=)[^&#]*`) })
)

// byShape masks a URL that does not parse.
func byShape(raw string) string {
	s := passwordRe().ReplaceAllString(raw, "${1}"+Masked+"@")
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s = s[:i] + queryRe().ReplaceAllString(s[i:], "${1}"+Masked)
	}
	return s
}
