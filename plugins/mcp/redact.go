package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"regexp"
	"strings"

	"github.com/skillgate/skillgate/internal/redact"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// A remote server's URL may carry a credential (https://user:pass@host,
// ?api_key=...), and Go's HTTP errors quote the URL. Status, logs and the
// errors calls return show it with the password and query values masked.

// redactURL masks the password and the query values of a URL, as
// internal/redact does for config errors; text without a scheme is left
// as it is.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Scheme == "" {
		return raw
	}
	return redact.URL(raw)
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

// The values of a remote server's headers are credentials (an API key, a
// bearer token), and so are some values of a stdio server's env; a server
// may echo them back: in an error body, a JSON-RPC error, a line on stderr
// or stdout, a dump of its environment. Every text the executor makes of
// what an upstream wrote shows them masked (the stdio wire masks stderr
// and stdout lines before cutting them), and so does the source's log.
//
// Secrets are: each header value and, for "Authorization: Scheme token",
// the token alone; the value of each env entry whose name looks like a
// credential (redact.CredentialName: API_TOKEN, DB_PASSWORD, GITHUB_PAT,
// SENTRY_DSN, ...), and so of each Environ entry (the variables passed from
// the gateway's); each env, Environ and args value that looks like a token
// whatever its name (redact.TokenLike: ghp_..., sk-..., AKIA...); the
// password of a URL in an env value or args (DATABASE_URL=postgres://u:pw@h),
// or its username when it has no password, and so of the server's url
// (https://TOKEN@host), and the password of a connection string
// (Server=db;Password=pw; see redact.EmbeddedSecrets); and the values in Spec.Secrets (the gateway lists
// there the env values the config wrote with a ${VAR}, and the values of
// credential ${VAR}s in args, cwd, command and url). Values shorter than
// redact.MinSecret are not masked: they would mask common words in every
// message ("json", "true") and are no credential worth the name.

// secrets are the values to mask for the spec (see above).
func (s *Spec) secrets() redact.Secrets {
	if s == nil {
		return redact.Secrets{}
	}
	var vals []string
	for _, v := range s.Headers {
		vals = append(vals, v)
		if _, tok, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
			vals = append(vals, tok)
		}
	}
	for _, env := range []map[string]string{s.Env, s.Environ} {
		for k, v := range env {
			if redact.CredentialName(k) || redact.TokenLike(v) {
				vals = append(vals, v)
			}
			vals = append(vals, redact.EmbeddedSecrets(v)...)
		}
	}
	for _, a := range s.Args {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v // --token=VALUE
		}
		if redact.TokenLike(a) {
			vals = append(vals, a)
		}
		vals = append(vals, redact.EmbeddedSecrets(a)...)
	}
	vals = append(vals, redact.URLSecrets(s.URL)...)
	return redact.NewSecrets(append(vals, s.Secrets...)...)
}

// redact masks, in text, the spec's secrets and the credentials of URLs.
// The secrets go first: a URL whose query is masked is spelled anew, and
// a secret in its path would no longer be found. A text cut short (see
// truncate) may end a part in the first bytes of a secret: those are
// masked too.
func (s *Spec) redact(text string) string {
	sec := s.secrets()
	text = redactURLs(sec.Mask(text))
	if sec.Len() == 0 || !strings.Contains(text, cutMark) {
		return text
	}
	parts := strings.Split(text, cutMark)
	for i := range parts[:len(parts)-1] {
		parts[i] = sec.MaskCut(parts[i])
	}
	return strings.Join(parts, cutMark)
}

// cutMark starts what truncate and the stdio wire put where they cut a
// text: "…(1234 bytes)".
const cutMark = "…("

// redactErr returns err with its message redacted (see redact), keeping
// its chain. An *sdk.RPCError, which travels to the client as it is, gets
// its message and data masked in place: each one is made for one answer.
// (A *ConnectError, which may be a wire's cause of death and so shared, is
// masked when it is made: see explainHTTP.)
func (s *Spec) redactErr(err error) error {
	if err == nil {
		return nil
	}
	var re *sdk.RPCError
	if errors.As(err, &re) {
		re.Message = s.redact(re.Message)
		if len(re.Data) > 0 {
			re.Data = s.redactJSON(re.Data)
		}
	}
	msg := s.redact(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

// redactJSON masks the spec's secrets in raw JSON, as they are spelled
// in a JSON string.
func (s *Spec) redactJSON(raw json.RawMessage) json.RawMessage {
	return s.secrets().MaskJSON(raw)
}

// maskLog returns log with every message and attribute redacted for spec.
func maskLog(log *slog.Logger, spec *Spec) *slog.Logger {
	if spec.secrets().Len() == 0 {
		return log
	}
	return slog.New(maskHandler{h: log.Handler(), spec: spec})
}

// maskHandler redacts the records it passes on.
type maskHandler struct {
	h    slog.Handler
	spec *Spec
}

func (m maskHandler) Enabled(ctx context.Context, l slog.Level) bool { return m.h.Enabled(ctx, l) }

func (m maskHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, m.spec.redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(m.attr(a))
		return true
	})
	return m.h.Handle(ctx, out)
}

func (m maskHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, m.spec.redact(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		out := make([]any, len(attrs))
		for i, g := range attrs {
			out[i] = m.attr(g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, m.spec.redact(err.Error()))
		}
		if s := v.String(); m.spec.redact(s) != s {
			return slog.String(a.Key, m.spec.redact(s))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func (m maskHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = m.attr(a)
	}
	return maskHandler{h: m.h.WithAttrs(out), spec: m.spec}
}

func (m maskHandler) WithGroup(name string) slog.Handler {
	return maskHandler{h: m.h.WithGroup(name), spec: m.spec}
}
