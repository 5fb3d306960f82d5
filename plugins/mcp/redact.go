package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/skillgate/skillgate/internal/redact"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// A remote server's URL may carry a credential (https://user:pass@host,
// ?api_key=...), and Go's HTTP errors quote the URL. Status, logs and the
// errors calls return show it with the password and query values masked.

const masked = redact.Masked

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
// bearer token), and a server may echo them back: in an error body, a
// JSON-RPC error, a log line. Every text the executor makes of an
// upstream's error shows them masked, and so does the source's log.

// minSecret is the length below which a header value is not masked: it
// would mask common words in every message ("json", "true") and is no
// credential worth the name.
const minSecret = 6

// secrets are the values to mask for the spec's headers: each value and,
// for an "Authorization: Scheme token" value, the token alone.
func (s *Spec) secrets() []string {
	var out []string
	for _, v := range s.Headers {
		v = strings.TrimSpace(v)
		if len(v) >= minSecret {
			out = append(out, v)
		}
		if _, tok, ok := strings.Cut(v, " "); ok {
			if tok = strings.TrimSpace(tok); len(tok) >= minSecret {
				out = append(out, tok)
			}
		}
	}
	// The longest first, so that a value is masked whole before a part.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// redact masks, in text, the credentials of URLs and the values of the
// spec's headers.
func (s *Spec) redact(text string) string {
	text = redactURLs(text)
	if s == nil {
		return text
	}
	for _, v := range s.secrets() {
		text = strings.ReplaceAll(text, v, masked)
	}
	return text
}

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

// redactJSON masks the header values in raw JSON, as they are spelled in
// a JSON string.
func (s *Spec) redactJSON(raw json.RawMessage) json.RawMessage {
	out := string(raw)
	for _, v := range s.secrets() {
		b, _ := json.Marshal(v)
		out = strings.ReplaceAll(out, string(b[1:len(b)-1]), masked)
	}
	if out == string(raw) {
		return raw
	}
	return json.RawMessage(out)
}

// maskLog returns log with every message and attribute redacted for spec.
func maskLog(log *slog.Logger, spec *Spec) *slog.Logger {
	if len(spec.secrets()) == 0 {
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
