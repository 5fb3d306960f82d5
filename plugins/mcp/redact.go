package mcp

import (
	"errors"
	"net/url"
	"regexp"
)

// A remote server's URL may carry a credential (https://user:pass@host,
// ?api_key=...), and Go's HTTP errors quote the URL. Status, logs and the
// errors calls return show it with the password and query values masked.

const masked = "xxxxx"

// redactURL masks the password and the query values of a URL.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return raw
	}
	changed := false
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), masked)
		changed = true
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k, vs := range q {
			for i := range vs {
				vs[i] = masked
			}
			q[k] = vs
		}
		u.RawQuery = q.Encode()
		changed = true
	}
	if !changed {
		return raw
	}
	return u.String()
}

var urlPattern = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)

// redactURLs masks every URL in s, as redactURL does.
func redactURLs(s string) string {
	if !urlPattern.MatchString(s) {
		return s
	}
	return urlPattern.ReplaceAllStringFunc(s, redactURL)
}

// redactErr returns err with the URLs in its message masked, keeping its
// chain for errors.Is and errors.As (whose *url.Error gets the masked URL
// too). The messages of wrapping errors are made when they wrap, so the
// whole message is masked, not only the *url.Error's.
func redactErr(err error) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = redactURL(ue.URL)
	}
	msg := redactURLs(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
