package mcpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis/plugins/mcpserver/mcpevents"
)

// Endpoint is the path of the MCP endpoint in HTTPHandler: what the
// Inspector and most clients assume.
const Endpoint = "/mcp"

// DefaultMaxMessage is the size of the largest message a transport accepts
// by default: a 64 MiB write with a quarter more for JSON's escapes and the
// envelope.
const DefaultMaxMessage = 80 << 20

// HTTPOptions configures HTTPHandler. The zero value serves without
// authentication or limits beyond DefaultMaxMessage.
type HTTPOptions struct {
	// Tokens are the bearer tokens the endpoint accepts, compared in
	// constant time. A session is bound to the token that opened it. None:
	// no authentication, for a loopback address only (the host's check).
	Tokens []string
	// SessionTimeout closes a session that sends no request for that long
	// (0: never): over HTTP nothing else tells a client that vanished from
	// one that is thinking.
	SessionTimeout time.Duration
	// MaxMessage bounds a request's body in bytes: a larger one gets 413,
	// and the session goes on. 0 or less: DefaultMaxMessage.
	MaxMessage int64
	// MaxSessions bounds the open sessions: a request that would open one
	// more gets 503. 0: no bound.
	MaxSessions int
	// Ready answers GET /readyz; nil: ready until the server is shut down.
	Ready func() bool
}

// HTTPHandler serves the streamable HTTP transport on Endpoint, each
// session a policy session, behind cross-origin protection, the bearer
// token and the session bound, and with the SDK's DNS-rebinding protection
// on. GET /healthz (alive) and GET /readyz (ready, and not draining: see
// Drain) need no token, so that a load balancer can probe them. Everything
// else is 404.
func (s *Server) HTTPHandler(o HTTPOptions) http.Handler {
	if o.MaxMessage <= 0 {
		o.MaxMessage = DefaultMaxMessage
	}
	if o.Ready == nil {
		o.Ready = func() bool { return !s.isClosed() }
	}
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.sdk }, &mcp.StreamableHTTPOptions{
		Logger:              s.logger,
		SessionTimeout:      o.SessionTimeout,
		MaxRequestBodyBytes: o.MaxMessage,
	})
	s.diverted.allow(o.MaxMessage)
	h = refuseSessionless(s.refuseLarge(o.MaxMessage, s.diverted.divertBody(h)))
	if o.MaxSessions > 0 {
		h = s.admit(o.MaxSessions, h)
	}
	h = s.drainable(h)
	if len(o.Tokens) > 0 {
		h = s.countUnauthorized(auth.RequireBearerToken(s.verifier(o.Tokens), &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h))
	}
	h = http.NewCrossOriginProtection().Handler(h)

	mux := http.NewServeMux()
	mux.Handle(Endpoint, h)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if s.drain.isDraining() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		if !o.Ready() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	return mux
}

// verifier accepts the configured tokens. Each is known by its position
// ("token-1", ...), never by its value: that name binds sessions to their
// token, keys the rate limit and appears in logs.
func (s *Server) verifier(tokens []string) auth.TokenVerifier {
	sums := make([][sha256.Size]byte, len(tokens))
	for i, t := range tokens {
		sums[i] = sha256.Sum256([]byte(t))
	}
	return func(_ context.Context, token string, req *http.Request) (*auth.TokenInfo, error) {
		// Equal-length digests, every one compared: the time taken says
		// nothing about how much of a token was right, nor which.
		got := sha256.Sum256([]byte(token))
		match := 0
		for i := range sums {
			if subtle.ConstantTimeCompare(got[:], sums[i][:]) == 1 {
				match = i + 1
			}
		}
		if match == 0 {
			s.logger.Warn("mcp: refused a request with a wrong bearer token", "remote", req.RemoteAddr)
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: "token-" + strconv.Itoa(match)}, nil
	}
}

// admit refuses a request that would open a session beyond limit with 503:
// the server is full, not the client at fault. A POST without a session ID
// opens one; it counts as opening until the SDK starts its answer, by when
// the session is among the server's, so concurrent openings cannot
// overshoot.
func (s *Server) admit(limit int, next http.Handler) http.Handler {
	var (
		mu      sync.Mutex
		opening int
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			next.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		open := opening
		for range s.sdk.Sessions() {
			open++
		}
		if open >= limit {
			mu.Unlock()
			s.refused(mcpevents.LimitSessions)
			s.logger.Warn("mcp: refused a new session: the server is full", "sessions", limit)
			w.Header().Set("Retry-After", "1")
			http.Error(w, fmt.Sprintf("too many sessions (the limit is %d)", limit), http.StatusServiceUnavailable)
			return
		}
		opening++
		mu.Unlock()
		hw := &headerHook{ResponseWriter: w, onHeader: func(int) {
			mu.Lock()
			opening--
			mu.Unlock()
		}}
		defer hw.header(http.StatusOK) // if the SDK wrote nothing
		next.ServeHTTP(hw, r)
	})
}

// countUnauthorized counts the requests the bearer token check refuses
// with 401, for a missing token as for a wrong one.
func (s *Server) countUnauthorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&headerHook{ResponseWriter: w, onHeader: func(status int) {
			if status == http.StatusUnauthorized {
				s.authFailed(r.RemoteAddr)
			}
		}}, r)
	})
}

// headerHook calls onHeader once, with the status, when the answer starts.
type headerHook struct {
	http.ResponseWriter
	once     sync.Once
	onHeader func(status int)
}

func (h *headerHook) header(status int) { h.once.Do(func() { h.onHeader(status) }) }

func (h *headerHook) WriteHeader(status int) {
	h.header(status)
	h.ResponseWriter.WriteHeader(status)
}

func (h *headerHook) Write(p []byte) (int, error) {
	h.header(http.StatusOK)
	return h.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection (flushes).
func (h *headerHook) Unwrap() http.ResponseWriter { return h.ResponseWriter }
