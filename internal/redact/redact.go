// Package redact masks credentials before they are shown in an error, a
// log line or a status. URL masks what a URL may carry (a userinfo
// password or lone username, query values such as ?api_key=...); Secrets
// masks known values wherever they occur, as the mcp executor
// (plugins/mcp) does with the values of a remote server's headers and with
// the secret values of a stdio server's env (those named like a
// credential, see CredentialName, those shaped like a token, see
// TokenLike, and those the config wrote as ${VAR}), at least MinSecret
// bytes long. Config errors and the gateway's logs mask alike.
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

// URL returns raw with its userinfo password (or its username, when it
// has no password: https://TOKEN@host is how some services pass a key;
// one shorter than MinSecret, such as ssh://git@host's, is no key) and
// every query value replaced by Masked, or raw itself when it holds none
// of them. A URL that does not parse is masked by its shape: what
// sits between "scheme://user:" (or "scheme://") and "@", and each value
// after "?" up to the next & or #.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return byShape(raw)
	}
	changed := false
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), Masked)
		changed = true
	} else if u.User != nil && len(u.User.Username()) >= MinSecret {
		u.User = url.User(Masked)
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
	usernameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([^:/?#]*://)[^:@/?#]{6,}@`) })
	queryRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([?&][^=&#]*=)[^&#]*`) })
)

// byShape masks a URL that does not parse.
func byShape(raw string) string {
	s := passwordRe().ReplaceAllString(raw, "${1}"+Masked+"@")
	s = usernameRe().ReplaceAllString(s, "${1}"+Masked+"@")
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s = s[:i] + queryRe().ReplaceAllString(s[i:], "${1}"+Masked)
	}
	return s
}

// URLSecrets returns the credentials the URL v carries in its userinfo:
// the password, or the username when there is no password (a Sentry DSN's
// key, https://TOKEN@host). A value that is no URL with a host carries
// none.
func URLSecrets(v string) []string {
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || u.Host == "" || u.User == nil {
		return nil
	}
	if pw, ok := u.User.Password(); ok {
		if pw == "" {
			return nil
		}
		return []string{pw}
	}
	if name := u.User.Username(); name != "" {
		return []string{name}
	}
	return nil
}

// EmbeddedSecrets returns the credentials a value carries inside it: a
// URL's (see URLSecrets), and in a connection string of NAME=VALUE parts
// separated by ";" (Server=db;Password=pw) the values of the parts named
// like a credential.
func EmbeddedSecrets(v string) []string {
	out := URLSecrets(v)
	if !strings.Contains(v, ";") {
		return out
	}
	for part := range strings.SplitSeq(v, ";") {
		if k, val, ok := strings.Cut(part, "="); ok && CredentialName(strings.TrimSpace(k)) && strings.TrimSpace(val) != "" {
			out = append(out, strings.TrimSpace(val))
		}
	}
	return out
}
