// Package redact masks the credentials a URL may carry (a userinfo
// password, query values such as ?api_key=...) before the URL is shown in
// an error or a log line. It masks what the mcp executor masks at run time
// (plugins/mcp), so that a config error shows a URL as the gateway's logs do.
//
//	redact.URL("https://bob:pw@host/mcp?key=k") // "https://bob:xxxxx@host/mcp?key=xxxxx"
package redact

import (
	"net/url"
	"regexp"
	"strings"
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

var (
	passwordRe = regexp.MustCompile(`^([^:/?#]*://[^:@/?#]*:)[^@/?#]*@`)
	queryRe    = regexp.MustCompile(`([?&][^=&#]*=)[^&#]*`)
)

// byShape masks a URL that does not parse.
func byShape(raw string) string {
	s := passwordRe.ReplaceAllString(raw, "${1}"+Masked+"@")
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s = s[:i] + queryRe.ReplaceAllString(s[i:], "${1}"+Masked)
	}
	return s
}
