package mcp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/skillgate/skillgate/plugins/sdk"
)

// ConnectError says why a remote server could not be reached or refused
// the gateway, once: what failed, at which URL, and what to do. The
// executor returns it (wrapped) when a remote source fails to start or its
// connection fails; gateway.CallRemote reads it to give advice of its own.
type ConnectError struct {
	// URL is the server's URL, credentials masked.
	URL string
	// Status is the HTTP status the server answered with; 0 when no
	// answer came.
	Status int
	// Problem says what went wrong, e.g. "connection refused".
	Problem string
	// Hint says what to do about it; it may be empty.
	Hint string
	// Err is the error underneath.
	Err error
}

// Error implements error.
func (e *ConnectError) Error() string {
	s := e.URL + ": " + e.Problem
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// Unwrap returns the error underneath, and sdk.ErrUnavailable: the source
// cannot serve (its message need not say so).
func (e *ConnectError) Unwrap() []error { return []error{sdk.ErrUnavailable, e.Err} }

// authHint is the advice for a server that wants credentials.
const authHint = `set them in the server's headers, e.g. headers: {Authorization: "Bearer ${TOKEN}"}` +
	" (skillgate sends headers as given and does not run an OAuth authorization flow for upstream servers: get a token from the service and put it in the variable)"

// mcpgoStatus matches the message mcp-go makes of an HTTP status it does
// not handle itself.
var mcpgoStatus = regexp.MustCompile(`request failed with status (\d{3}): ?(.*)`)

// explainHTTP turns an error of an HTTP exchange with spec's server into
// a *ConnectError when it knows what it means; else it returns err. The
// chain below is kept, for errors.Is. The values of spec's headers are
// masked in what the server said.
func explainHTTP(spec *Spec, err error) error {
	var ce *ConnectError
	if errors.As(err, &ce) {
		return err // explained already, and perhaps shared
	}
	err = explain(spec, err)
	if errors.As(err, &ce) {
		ce.Problem = spec.redact(ce.Problem)
	}
	return err
}

// explain is explainHTTP before the masking.
func explain(spec *Spec, err error) error {
	if err == nil {
		return nil
	}
	var ce *ConnectError
	if errors.As(err, &ce) {
		return err
	}
	e := &ConnectError{URL: redactURL(spec.URL), Err: err}
	host := hostOf(spec.URL)
	var auth *transport.AuthorizationRequiredError
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var badHost x509.HostnameError
	var certErr *tls.CertificateVerificationError
	var ue *url.Error
	var redirect *redirectError
	switch {
	case errors.As(err, &redirect):
		e.Problem = redirect.Error()
		if redirect.from == e.URL {
			e.Problem = "redirected to " + redirect.to + ", another origin; skillgate does not follow it"
		}
		e.Hint = "set url to the final URL if you trust that server (skillgate does not send the server's headers to another origin)"
	case errors.As(err, &auth) || errors.Is(err, transport.ErrAuthorizationRequired):
		e.Status = http.StatusUnauthorized
		e.Problem, e.Hint = unauthorized(spec, auth)
	case errors.Is(err, transport.ErrLegacySSEServer):
		e.Problem = "the server refused the streamable HTTP initialize (HTTP 4xx): it may serve only the legacy HTTP+SSE transport"
		e.Hint = "set transport: sse, or leave transport unset to fall back to SSE by itself"
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Problem = "connection refused: nothing listens at " + host
		e.Hint = "is the server running? check the server's url"
	case errors.As(err, &dns):
		e.Problem = fmt.Sprintf("host %q not found (DNS: %s)", dns.Name, dns.Err)
		e.Hint = "check the server's url"
	case errors.As(err, &unknownCA), errors.As(err, &badHost), errors.As(err, &certErr):
		e.Problem = "its TLS certificate is not trusted: " + innermost(err)
		e.Hint = "check the url's host name; a private CA must be in the system's trust store"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		e.Problem = "the connection was reset: " + innermost(err)
		e.Hint = "is url an MCP endpoint served over " + schemeOf(spec.URL) + "?"
	default:
		if m := mcpgoStatus.FindStringSubmatch(err.Error()); m != nil {
			status, _ := strconv.Atoi(m[1])
			return statusProblem(e, status, []byte(m[2]))
		}
		if !errors.As(err, &ue) {
			return err
		}
		e.Problem = innermost(err)
	}
	return e
}

// statusError is the error of a request that the server answered with a
// status that is not a success.
func statusError(spec *Spec, method string, resp *http.Response, body []byte) error {
	e := &ConnectError{URL: redactURL(spec.URL), Err: fmt.Errorf("%s answered HTTP %d", method, resp.StatusCode)}
	if resp.StatusCode == http.StatusUnauthorized {
		e.Status = resp.StatusCode
		auth := &transport.AuthorizationRequiredError{ResourceMetadataURL: resourceMetadata(resp.Header.Values("WWW-Authenticate"))}
		e.Problem, e.Hint = unauthorized(spec, auth)
		e.Err = auth
		return e
	}
	e = statusProblem(e, resp.StatusCode, body)
	e.Problem = spec.redact(e.Problem)
	return e
}

// statusProblem fills e for an HTTP status and the start of its body.
func statusProblem(e *ConnectError, status int, body []byte) *ConnectError {
	e.Status = status
	e.Problem = fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	if b := bodySummary(body); b != "" {
		e.Problem += ": " + b
	}
	switch {
	case status == http.StatusForbidden:
		e.Hint = "the server refused the credentials given: check the server's headers (the token, and what it may access)"
	case status == http.StatusNotFound, status == http.StatusMethodNotAllowed:
		e.Hint = "is url the server's MCP endpoint? check its path (often /mcp; /sse for legacy SSE servers)"
	case status >= 500:
		e.Hint = "the server failed: see its logs"
	}
	return e
}

// bodySummary is what an error message shows of an HTTP body: its start,
// or the title of an HTML page (the page itself is noise).
func bodySummary(body []byte) string {
	b := strings.TrimSpace(string(body))
	if !strings.HasPrefix(b, "<") {
		return truncate(b, 200)
	}
	lower := strings.ToLower(b)
	if i := strings.Index(lower, "<title>"); i >= 0 {
		if j := strings.Index(lower[i:], "</title>"); j >= 0 {
			if title := strings.TrimSpace(b[i+len("<title>") : i+j]); title != "" {
				return "an HTML page titled " + strconv.Quote(truncate(title, 100))
			}
		}
	}
	return "an HTML page"
}

// redirectError is the error of a redirect the wires do not follow.
type redirectError struct{ from, to string } // masked

func (e *redirectError) Error() string {
	return fmt.Sprintf("%s redirected to %s, another origin; skillgate does not follow it", e.from, e.to)
}

// checkRedirect is the CheckRedirect of the wires' HTTP clients: a
// redirect to another origin (scheme, host and port) is not followed, as
// the request carries the server's headers, credentials among them (Go
// drops only Authorization and cookies on the way). One on the same
// origin is, headers and all.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return fmt.Errorf("stopped after 10 redirects, at %s", redactURL(req.URL.String()))
	}
	if from := via[0].URL; origin(from) != origin(req.URL) {
		return &redirectError{from: redactURL(from.String()), to: redactURL(req.URL.String())}
	}
	return nil
}

// origin is a URL's scheme, host and port, the port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if strings.EqualFold(u.Scheme, "https") {
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// unauthorized describes a 401.
func unauthorized(spec *Spec, auth *transport.AuthorizationRequiredError) (problem, hint string) {
	problem = "HTTP 401 Unauthorized: the server wants credentials"
	if auth != nil && auth.ResourceMetadataURL != "" {
		problem += " (it uses OAuth; its metadata: " + redactURL(auth.ResourceMetadataURL) + ")"
	}
	for k := range spec.Headers {
		if strings.EqualFold(k, "Authorization") {
			return problem, "it refused the Authorization header set in the server's headers: check the token (and the variable it comes from)"
		}
	}
	return problem, authHint
}

// resourceMetadata finds the resource_metadata URL of RFC 9728 in
// WWW-Authenticate headers.
func resourceMetadata(values []string) string {
	for _, v := range values {
		if _, after, ok := strings.Cut(v, `resource_metadata="`); ok {
			if u, _, ok := strings.Cut(after, `"`); ok {
				return u
			}
		}
	}
	return ""
}

// innermost is the message of the error at the bottom of a *url.Error or
// *net.OpError, which do not repeat the method and URL that the
// ConnectError names already.
func innermost(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	if u.Port() == "" {
		if u.Scheme == "https" {
			return u.Host + ":443"
		}
		return u.Host + ":80"
	}
	return u.Host
}

func schemeOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" {
		return u.Scheme
	}
	return "http"
}
