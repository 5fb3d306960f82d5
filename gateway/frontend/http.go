package frontend

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/skillgate/skillgate/gateway/disclosure"
)

// HTTPOptions configure the streamable HTTP endpoint.
type HTTPOptions struct {
	// Path is the endpoint path; default "/mcp".
	Path string
	// AllowedOrigins lists browser origins (scheme://host[:port]) allowed in
	// addition to loopback ones. A request with any other Origin is refused.
	AllowedOrigins []string
	// AllowedHosts lists Host values (a name, or name:port) accepted
	// besides loopback ones, for a gateway reached by name through a proxy
	// or tunnel, or beyond loopback without Tokens (see hostAllowed).
	AllowedHosts []string
	// Tokens, when not empty, are the accepted bearer tokens.
	Tokens []string
	// BodyCap is the largest request body accepted; default 4 MiB.
	BodyCap int64
}

// Handler returns the streamable HTTP endpoint, guarded by Origin and Host
// validation, bearer tokens and a body cap.
func (s *Server) Handler() http.Handler {
	path := s.opts.HTTP.Path
	if path == "" {
		path = "/mcp"
	}
	inner := server.NewStreamableHTTPServer(s.mcp,
		server.WithEndpointPath(path),
		server.WithStreamableHTTPLogger(s.log),
		// guard checks the Host of every request, with listen.allowed_hosts,
		// which mcp-go's own loopback check knows nothing of.
		server.WithDisableLocalhostProtection(true),
		server.WithSessionIdManager(sessionIDs{s}),
	)
	return &guard{s: s, path: path, next: inner}
}

// SetAccess replaces the HTTP access rules (allowed origins, bearer
// tokens, body cap) for the requests that arrive from now on: a config
// reload that rotates tokens takes effect at once. o.Path is ignored.
func (s *Server) SetAccess(o HTTPOptions) {
	if o.BodyCap <= 0 {
		o.BodyCap = 4 << 20
	}
	o.AllowedOrigins = slices.Clone(o.AllowedOrigins)
	o.AllowedHosts = slices.Clone(o.AllowedHosts)
	o.Tokens = slices.Clone(o.Tokens)
	s.access.Store(&o)
	s.endRevokedStreams(o.Tokens)
}

// guard applies the gateway's HTTP rules before mcp-go sees a request.
type guard struct {
	s    *Server
	path string
	next http.Handler
}

// Guard returns h behind the endpoint's Host, Origin and bearer token
// checks, for the gateway's other HTTP resources.
func (s *Server) Guard(h http.Handler) http.Handler {
	g := &guard{s: s}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = s.boundBody(w, r)
		if g.admit(w, r) {
			h.ServeHTTP(w, r)
		}
	})
}

// Trusted reports whether r passes the endpoint's Host and bearer token
// checks (Origin aside): whether it may see details of the gateway that a
// probe needs not, such as each source's state and last error.
func (s *Server) Trusted(r *http.Request) bool {
	a := s.access.Load()
	return hostAllowed(a, r) && (len(a.Tokens) == 0 || authorized(a, r))
}

// admit applies the access rules, answering r itself when they refuse it.
func (g *guard) admit(w http.ResponseWriter, r *http.Request) bool {
	a := g.s.access.Load()
	if !hostAllowed(a, r) {
		http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q (DNS rebinding protection); add it to listen.allowed_hosts if the gateway is reached by that name", r.Host), http.StatusForbidden)
		return false
	}
	if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(a, origin) {
		http.Error(w, fmt.Sprintf("Forbidden: origin %q is not allowed; add it to listen.allowed_origins", origin), http.StatusForbidden)
		return false
	}
	if preflight := allowCORS(w, r); preflight {
		return false // answered before auth: a browser sends no token with it (cors.go)
	}
	if len(a.Tokens) > 0 && !authorized(a, r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="skillgate"`)
		http.Error(w, "Unauthorized: send Authorization: Bearer <token> with a token from auth.tokens", http.StatusUnauthorized)
		return false
	}
	return true
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r = g.s.boundBody(w, r)
	if !g.admit(w, r) {
		return
	}
	a := g.s.access.Load()
	r = r.WithContext(WithOrigin(r.Context(), Origin{Transport: TransportHTTP, Token: len(a.Tokens) > 0 && authorized(a, r)}))
	profile, ok := g.profile(r.URL.Path)
	if !ok {
		g.notFound(w, r.URL.Path)
		return
	}
	if profile != "" {
		r = r.WithContext(context.WithValue(r.Context(), profileKey{}, profile))
	}
	sessID := r.Header.Get("Mcp-Session-Id")
	switch r.Method {
	case http.MethodPost:
		if r.Body != nil {
			g.servePost(w, r, profile, sessID)
			return
		}
	case http.MethodGet, http.MethodDelete:
		if sessID == "" && !mcp.IsModernProtocol(r.Header.Get("Mcp-Protocol-Version")) {
			// mcp-go would open a stream (GET) for a session no one can
			// post to, which never carries anything, or end none (DELETE).
			missingSession(w, r.Method, false, nil)
			return
		}
		// mcp-go opens a stream (GET) and ends a session (DELETE) under
		// any id it is given.
		if sessID != "" && !mcp.IsModernProtocol(r.Header.Get("Mcp-Protocol-Version")) {
			if g.s.foreignSession(sessID, r) || !g.s.knownSession(sessID) {
				sessionGone(w, nil)
				return
			}
			if r.Method == http.MethodDelete {
				defer g.s.forgetSession(sessID)
				defer g.s.Disclosure().EndSession(sessID)
				defer g.s.endSessionStreams(sessID)
				defer g.s.endSessionCalls(sessID)
			}
			if r.Method == http.MethodGet {
				// A session listening on its stream is in use. It has one
				// stream at most: mcp-go would hand each message to one
				// of several, and each holds a connection.
				if v, ok := g.s.sessions.Load(sessID); ok {
					use := &v.(*session).use
					if !use.streams.CompareAndSwap(0, 1) {
						streamConflict(w)
						return
					}
					defer func() { use.touch(time.Now()); use.streams.Add(-1) }()
				}
			}
		}
		if r.Method == http.MethodGet {
			var done func()
			r, done = g.s.trackStream(r, sessID)
			defer done()
			if _, gated := g.s.gated.Load(sessID); gated {
				w = &heldBackWriter{s: g.s, w: w, session: sessID}
			}
		}
	}
	g.next.ServeHTTP(w, r)
}

// servePost serves a POST: the front end answers what it can itself and
// hands the rest to mcp-go, judging each request as mcp-go would first.
func (g *guard) servePost(w http.ResponseWriter, r *http.Request, profile, sessID string) {
	bodyCap := g.s.access.Load().BodyCap
	body, err := io.ReadAll(io.LimitReader(r.Body, bodyCap+1))
	if stalled(err) {
		g.s.bodyStalled(w)
		return
	}
	if err != nil {
		http.Error(w, "Bad Request: reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if int64(len(body)) > bodyCap {
		http.Error(w, fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes (limits.http_body_cap)", bodyCap), http.StatusRequestEntityTooLarge)
		return
	}
	if sessID != "" && g.s.foreignSession(sessID, r) {
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &msg)
		sessionGone(w, msg.ID)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	if !jsonContent(r.Header.Get("Content-Type")) {
		g.next.ServeHTTP(w, r) // mcp-go's 400 names the type it wants
		return
	}
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not supported; send one request per POST"}}`)
		return
	}
	if kind := nonObject(body); kind != "" {
		refuse(w, nil, notObjectError(kind), http.StatusBadRequest)
		return
	}
	req, ok := parseRequest(body)
	if !ok {
		// mcp-go answers what does not decode; a session it does not know
		// it refuses (sessionIDs).
		g.next.ServeHTTP(w, r)
		return
	}
	if e := messageError(body, &req); e != nil {
		refuse(w, req.ID, e, http.StatusBadRequest)
		return
	}
	_, isList := listKeys[req.Method]
	modern := modernRequest(r, req)
	if sessID != "" && !modern && req.Method != string(mcp.MethodInitialize) && !g.s.knownSession(sessID) {
		sessionGone(w, req.ID)
		return
	}
	if sessID == "" && !modern && req.Method != "" && req.Method != string(mcp.MethodInitialize) && legacyVersion(r) {
		missingSession(w, r.Method, true, req.ID)
		return
	}
	if e := argumentsError(&req); e != nil && req.valid() && hasValue(req.ID) {
		refuse(w, req.ID, e, paramsStatus(modern))
		return
	}
	if req.Method == string(mcp.MethodResourcesRead) {
		var uri, standIn string
		if body, uri, standIn = g.s.standInRead(body); standIn != "" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			// mcp-go checks a 2026-07-28 request's Mcp-Name against the body.
			if r.Header.Get("Mcp-Name") == uri {
				r.Header.Set("Mcp-Name", standIn)
			}
		}
	}
	if hasValue(req.ID) && !g.s.awaitServing(r.Context(), req.Method, nil) {
		return // the client went away while the gateway started
	}
	if sessID != "" && !modern {
		g.s.noteListing(sessID, req.Method)
	}
	dreq := disclosure.Request{Profile: profile}
	if sessID != "" && !modern {
		dreq.Session = sessID
		r = r.WithContext(withClient(r.Context(), sessID))
	}
	// The front end answers only requests mcp-go would take as they are
	// (request.plain); anything else goes to mcp-go, which says what is
	// wrong with it, so a request is judged the same whichever path it
	// would have taken.
	plain := req.plain()
	if isList && req.Params.Cursor != nil && plain && hasValue(req.ID) {
		// The gateway answers every list whole and issues no cursors: an
		// empty one is the start, any other is not one of ours. (mcp-go
		// would page its own copy of the catalog, every profile's.)
		if *req.Params.Cursor != "" {
			invalidCursor(w, &req, modern)
			return
		}
		req.Params.Cursor = nil
	}
	if m, ok := g.s.opts.Methods[req.Method]; ok && req.valid() && hasValue(req.ID) &&
		(modern && modernPlain(r, &req) || !modern && legacyVersion(r)) {
		methodSession := ""
		if !modern {
			methodSession = sessID
		}
		g.s.serveMethod(w, r, m, methodSession, req.ID, body, modern)
		return
	}
	switch {
	case len(req.ID) == 0 && strings.HasPrefix(req.Method, "notifications/") &&
		mcp.IsModernProtocol(r.Header.Get("MCP-Protocol-Version")) && req.protocolVersion() == "":
		// The version is in the header only (see withMetaVersion).
		body = withMetaVersion(body, r.Header.Get("MCP-Protocol-Version"))
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	case plain && modern && (req.Method == string(mcp.MethodToolsList) && req.Params.Cursor == nil || req.Method == string(mcp.MethodToolsCall)) && modernPlain(r, &req):
		if req.Method == string(mcp.MethodToolsList) {
			g.s.serveList(w, req, dreq, true)
			return
		}
		if g.s.serveFastCall(w, r, nil, &req, dreq) {
			return
		}
	case req.Method == string(mcp.MethodInitialize):
		if why := oversizedInit(body); why != "" {
			refuseInit(w, req.ID, why)
			return
		}
		if !g.s.reserveSession(time.Now()) {
			g.s.tooManySessions(w, req.ID)
			return
		}
		// The place reserved is the session's once the tracker records it.
		st := &sessionTracker{s: g.s, caps: declaredCaps(body), owner: tokenFingerprint(r)}
		defer func() {
			if !st.stored {
				g.s.releaseSession()
			}
		}()
		track := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			st.ResponseWriter = w
			g.next.ServeHTTP(st, r)
		})
		if exactID(req.ID) {
			g.s.serveRewritten(w, r, track, answerEdit{id: req.ID})
			return
		}
		track(w, r)
		return
	case plain && isList && req.Params.Cursor == nil:
		if _, ok := g.legacySession(r, req); ok {
			g.s.serveList(w, req, dreq, false)
			return
		}
	case plain && req.Method == string(mcp.MethodToolsCall):
		if sess, ok := g.legacySession(r, req); ok && g.s.serveFastCall(w, r, sess, &req, dreq) {
			return
		}
	case req.Method == "" && len(req.ID) > 0:
		// A client's answer to a server-to-client request.
		if sessID != "" && g.s.answerFast(sessID, req.ID, body) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
	case req.valid() && req.Method == string(mcp.MethodNotificationCancelled):
		if sessID != "" && g.s.cancelFast(sessID, body) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
	}
	if req.Method == "subscriptions/listen" {
		if !g.s.reserveListen() {
			g.s.tooManyListens(w, req.ID)
			return
		}
		defer g.s.nlisten.Add(-1)
		var done func()
		r, done = g.s.trackStream(r, "")
		defer done()
	}
	defer g.s.drained(sessID, g.s.notified.Load())
	// A request of a session, which its client may cancel: mcp-go cancels
	// its handler, and the rewriter drops the response it still writes.
	var call *inflightCall
	if sessID != "" && !modern && req.valid() && hasValue(req.ID) && req.Method != "" && req.Method != string(mcp.MethodInitialize) {
		ctx, end := context.WithCancel(r.Context()) // ended with the session (endSessionCalls)
		defer end()
		r = r.WithContext(ctx)
		call = g.s.track(nil, sessID, req.ID, nil, end)
		defer g.s.untrack(call)
	}
	edit := answerEdit{dreq: dreq, modern: modern, call: call}
	if rewrites(req.Method) && (!isList || req.Params.Cursor == nil) {
		edit.method = req.Method
	}
	if exactID(req.ID) {
		edit.id = req.ID
	}
	// A subscriptions/listen the gateway refuses carries its error in the
	// stash (subscribeError).
	if edit.method != "" || edit.call != nil || edit.id != nil || req.Method == "subscriptions/listen" {
		g.s.serveRewritten(w, r, g.next, edit)
		return
	}
	g.next.ServeHTTP(w, r)
}

// jsonContent reports whether a POST's Content-Type is JSON, as mcp-go
// requires of every POST.
func jsonContent(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// legacyVersion reports whether mcp-go takes the MCP-Protocol-Version of a
// request of the 2025-11-25 era or older: a version it implements, or none
// (2025-03-26 clients send none).
func legacyVersion(r *http.Request) bool {
	pv := r.Header.Get("Mcp-Protocol-Version")
	return pv == "" || mcp.IsValidProtocolVersion(pv)
}

// legacySession reports whether r belongs to a live session of the
// 2025-11-25 era or older that mcp-go issued, with no notification that
// mcp-go may still hold for it: mcp-go delivers a session's queued
// notifications on its next request, so a session is answered past mcp-go
// only once a request of its own went through mcp-go after the last
// notification to all sessions.
func (g *guard) legacySession(r *http.Request, req request) (*session, bool) {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" || modernRequest(r, req) {
		return nil, false
	}
	v, ok := g.s.sessions.Load(id)
	if !ok {
		return nil, false
	}
	if !legacyVersion(r) {
		return nil, false // mcp-go answers an unsupported version with its error
	}
	sess := v.(*session)
	return sess, sess.drained.Load() == g.s.notified.Load()
}

// knownSession reports whether id names a session of the 2025-11-25 era
// or older that the front end saw mcp-go issue and that has not ended.
func (s *Server) knownSession(id string) bool {
	now := time.Now()
	s.expireSessions(now) // at most once a minute; this one may be the expired one
	v, ok := s.sessions.Load(id)
	if ok {
		v.(*session).use.touch(now)
		v.(*session).use.confirmed.Store(true)
	}
	return ok
}

// sessionGone answers a request in a session the gateway did not issue or
// that ended (a DELETE, or the gateway restarted), as the transport
// prescribes: 404, upon which the client initializes a new session. id is
// the request's JSON-RPC id, if it has one.
func sessionGone(w http.ResponseWriter, id json.RawMessage) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	msg := rpcEnvelope(id, `,"error":`, []byte(`{"code":-32001,"message":"Session not found: this gateway did not issue the Mcp-Session-Id, or the session ended (DELETE, unused for too long: 24 h, or 2 min right after initialize, or a gateway restart); send initialize without it to start a new session"}`))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write(append(msg, '\n'))
}

// invalidCursor answers a list request whose cursor the gateway did not
// issue: invalid params, which 2026-07-28 maps to HTTP 400.
func invalidCursor(w http.ResponseWriter, req *request, modern bool) {
	refuse(w, req.ID, cursorError(req), paramsStatus(modern))
}

// sessionIDs is mcp-go's session id manager. mcp-go's default one checks
// only an id's format; this one takes the ids the front end knows (see
// knownSession), so a request that reaches mcp-go under any other id is
// refused there too (guard answers most of them before mcp-go sees them).
// Ids are made as mcp-go's default makes them.
type sessionIDs struct{ s *Server }

var _ server.SessionIdManager = sessionIDs{}

// Generate implements server.SessionIdManager.
func (sessionIDs) Generate() string {
	return (&server.StatelessGeneratingSessionIdManager{}).Generate()
}

// Validate implements server.SessionIdManager.
func (m sessionIDs) Validate(id string) (isTerminated bool, err error) {
	if !m.s.knownSession(id) {
		return false, fmt.Errorf("unknown session %q", id)
	}
	return false, nil
}

// Terminate implements server.SessionIdManager: guard forgets the session
// when mcp-go has ended it.
func (sessionIDs) Terminate(string) (isNotAllowed bool, err error) { return false, nil }

// modernRequest reports whether r is of the 2026-07-28 era or later.
func modernRequest(r *http.Request, req request) bool {
	return mcp.IsModernProtocol(r.Header.Get("Mcp-Protocol-Version")) || mcp.IsModernProtocol(req.protocolVersion())
}

// profile maps a request path to the profile it names: "" for the
// endpoint itself, the name for <path>/p/<name>; ok is false for an
// unknown profile or any other path.
func (g *guard) profile(p string) (string, bool) {
	if p == g.path || p == g.path+"/" {
		return "", true
	}
	name, ok := strings.CutPrefix(p, g.path+"/p/")
	name = strings.TrimSuffix(name, "/")
	if !ok || name == "" || strings.Contains(name, "/") || !g.s.Disclosure().HasProfile(name) {
		return "", false
	}
	return name, true
}

func (g *guard) notFound(w http.ResponseWriter, p string) {
	names := g.s.Disclosure().Profiles()
	msg := fmt.Sprintf("Not Found: %s is not an MCP endpoint of this gateway; ", p)
	if len(names) == 0 {
		msg += fmt.Sprintf("use %s (no profiles are configured; add them under profiles: in skillgate.yaml)", g.path)
	} else {
		eps := make([]string, len(names))
		for i, n := range names {
			eps[i] = g.path + "/p/" + n
		}
		msg += fmt.Sprintf("use %s or a profile: %s", g.path, strings.Join(eps, ", "))
	}
	http.Error(w, msg, http.StatusNotFound)
}

// hostAllowed guards against DNS rebinding: a request that reached a
// loopback listener must name a loopback host, or one of a.AllowedHosts
// (an entry without a port matches any port). Beyond loopback without
// tokens (where a rebound page could call every tool) it may also name an
// IP address, which no rebinding attacker's page has; with tokens, any
// host (a page cannot send the token).
func hostAllowed(a *HTTPOptions, r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || isLoopback(r.Host) {
		return true
	}
	beyond := !isLoopback(local.String())
	if beyond && len(a.Tokens) > 0 {
		return true
	}
	name, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		name = r.Host
	}
	if beyond && net.ParseIP(strings.Trim(name, "[]")) != nil {
		return true
	}
	for _, h := range a.AllowedHosts {
		if strings.EqualFold(h, r.Host) || strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// originAllowed accepts loopback origins and the configured ones.
func originAllowed(a *HTTPOptions, origin string) bool {
	for _, o := range a.AllowedOrigins {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func authorized(a *HTTPOptions, r *http.Request) bool {
	tok := bearerToken(r)
	if tok == "" {
		return false
	}
	got := []byte(tok)
	ok := 0
	for _, t := range a.Tokens {
		ok |= subtle.ConstantTimeCompare(got, []byte(t))
	}
	return ok == 1
}
