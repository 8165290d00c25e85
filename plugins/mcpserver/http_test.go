package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis/plugins/mcpserver"
	"github.com/gordis-run/gordis/plugins/mcpserver/mcpevents"
	"github.com/gordis-run/gordis/runtime"
)

// serveHTTP serves fx's server with o on a real HTTP server.
func (fx *fixture) serveHTTP(t *testing.T, o mcpserver.HTTPOptions) string {
	t.Helper()
	srv := httptest.NewServer(fx.server.HTTPHandler(o))
	t.Cleanup(srv.Close)
	return srv.URL
}

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// dial opens a session on base's endpoint with token ("": none).
func dial(t *testing.T, base, token string) (*mcp.ClientSession, error) {
	t.Helper()
	client := &http.Client{}
	if token != "" {
		client.Transport = bearer{token}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + mcpserver.Endpoint, HTTPClient: client, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func mustDial(t *testing.T, base, token string) *mcp.ClientSession {
	t.Helper()
	cs, err := dial(t, base, token)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// post sends body to the endpoint as a client would and returns the status
// and the body of the answer.
func post(t *testing.T, base string, header map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+mcpserver.Endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got)
}

// TestHTTPAuth: without a token, or with a wrong one, the endpoint answers
// 401 and opens nothing; each configured token opens sessions; a session
// belongs to the token that opened it.
func TestHTTPAuth(t *testing.T) {
	fx := newFixture(t)
	fx.file(t, "a.txt", "alpha\n")
	base := fx.serveHTTP(t, mcpserver.HTTPOptions{Tokens: []string{"first-secret", "second-secret"}})
	for _, tc := range []struct {
		name, auth, want string
	}{
		{"no token", "", "no bearer token\n"},
		{"wrong token", "Bearer first-secreT", "invalid token\n"},
		{"a prefix", "Bearer first", "invalid token\n"},
		{"not bearer", "Basic Zmlyc3Qtc2VjcmV0", "no bearer token\n"},
	} {
		header := map[string]string{}
		if tc.auth != "" {
			header["Authorization"] = tc.auth
		}
		if code, body := post(t, base, header, initialize); code != http.StatusUnauthorized || body != tc.want {
			t.Errorf("%s: %d %q, want 401 %q", tc.name, code, body, tc.want)
		}
	}
	for range fx.server.MCP().Sessions() {
		t.Fatal("a refused request opened a session")
	}
	if _, err := dial(t, base, "wrong"); err == nil {
		t.Error("the SDK client connected with a wrong token")
	}
	for _, token := range []string{"first-secret", "second-secret"} {
		cs := mustDial(t, base, token)
		if res := call(t, cs, "read", map[string]any{"file_path": "a.txt"}); res.IsError {
			t.Fatalf("read with %s: %q", token, text(t, res))
		}
	}

	// A session ID does not let another token in.
	cs := mustDial(t, base, "first-secret")
	header := map[string]string{"Authorization": "Bearer second-secret", "Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": "2025-11-25"}
	if code, body := post(t, base, header, `{"jsonrpc":"2.0","id":9,"method":"ping"}`); code != http.StatusForbidden || body != "session user mismatch\n" {
		t.Errorf("another token's session: %d %q, want 403", code, body)
	}
}

// TestHTTPProbes: /healthz and /readyz need no token; /readyz follows
// Ready; other paths are not found.
func TestHTTPProbes(t *testing.T) {
	fx := newFixture(t)
	var ready atomic.Bool
	ready.Store(true)
	base := fx.serveHTTP(t, mcpserver.HTTPOptions{Tokens: []string{"secret"}, Ready: ready.Load})
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, tc := range []struct {
		path  string
		ready bool
		code  int
		body  string
	}{
		{"/healthz", true, 200, "ok\n"},
		{"/readyz", true, 200, "ready\n"},
		{"/readyz", false, 503, "not ready\n"},
		{"/healthz", false, 200, "ok\n"},
		{"/", true, 404, "404 page not found\n"},
		{"/mcp/x", true, 404, "404 page not found\n"},
	} {
		ready.Store(tc.ready)
		if code, body := get(tc.path); code != tc.code || body != tc.body {
			t.Errorf("GET %s (ready %v): %d %q, want %d %q", tc.path, tc.ready, code, body, tc.code, tc.body)
		}
	}
}

// TestHTTPCrossOrigin: a browser's cross-site POST is refused, with or
// without a token; a non-browser client (no Origin) is not affected.
func TestHTTPCrossOrigin(t *testing.T) {
	fx := newFixture(t)
	base := fx.serveHTTP(t, mcpserver.HTTPOptions{})
	code, body := post(t, base, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, initialize)
	if code != http.StatusForbidden || body != "cross-origin request detected from Sec-Fetch-Site header\n" {
		t.Errorf("cross-site POST: %d %q, want 403", code, body)
	}
	if code, body := post(t, base, nil, initialize); code != http.StatusOK {
		t.Errorf("POST without Origin: %d %q", code, body)
	}
}

// TestHTTPRebinding: the SDK's DNS-rebinding protection stays on: a request
// that reaches a loopback listener under another host name is refused, a
// token notwithstanding.
func TestHTTPRebinding(t *testing.T) {
	fx := newFixture(t)
	base := fx.serveHTTP(t, mcpserver.HTTPOptions{Tokens: []string{"secret"}})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+mcpserver.Endpoint, strings.NewReader(initialize))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "attacker.example"
	req.Header.Set("Authorization", "Bearer secret")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if want := "Forbidden: invalid Host header \"attacker.example\"\n"; resp.StatusCode != http.StatusForbidden || string(body) != want {
		t.Errorf("a rebound host: %d %q, want 403 %q", resp.StatusCode, body, want)
	}
}

// TestHTTPMessageLimit: a body over the limit gets 413, and the same
// session's next request is served.
func TestHTTPMessageLimit(t *testing.T) {
	fx := newFixture(t)
	fx.file(t, "a.txt", "alpha\n")
	const limit = 64 << 10
	base := fx.serveHTTP(t, mcpserver.HTTPOptions{MaxMessage: limit})
	cs := mustDial(t, base, "")
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"file_path": "big.txt", "content": strings.Repeat("x", limit)}})
	var jerr *jsonrpc.Error
	if !errors.As(err, &jerr) || jerr.Code != jsonrpc.CodeInvalidRequest || jerr.Message != "invalid request: the message is larger than 65536 bytes" || !strings.Contains(err.Error(), "Request Entity Too Large") {
		t.Errorf("a call over the limit: %v, want a JSON-RPC error with 413", err)
	}
	header := map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": "2025-11-25"}
	body := `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"` + strings.Repeat("y", limit) + `"}}`
	want := `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"invalid request: the message is larger than 65536 bytes"}}` + "\n"
	if code, got := post(t, base, header, body); code != http.StatusRequestEntityTooLarge || got != want {
		t.Errorf("a raw body over the limit: %d %q, want 413", code, got)
	}
	if res := call(t, cs, "read", map[string]any{"file_path": "a.txt"}); res.IsError {
		t.Errorf("read after the refusal: %q", text(t, res))
	}
}

// TestHTTPSessionLimit: a session beyond the limit is refused with 503
// while the open ones go on; closing one makes room.
func TestHTTPSessionLimit(t *testing.T) {
	fx := newFixture(t)
	fx.file(t, "a.txt", "alpha\n")
	base := fx.serveHTTP(t, mcpserver.HTTPOptions{MaxSessions: 2})
	first, second := mustDial(t, base, ""), mustDial(t, base, "")
	if code, body := post(t, base, nil, initialize); code != http.StatusServiceUnavailable || body != "too many sessions (the limit is 2)\n" {
		t.Errorf("a third session: %d %q, want 503", code, body)
	}
	if res := call(t, second, "read", map[string]any{"file_path": "a.txt"}); res.IsError {
		t.Errorf("an open session after the refusal: %q", text(t, res))
	}
	first.Close()
	if _, err := dial(t, base, ""); err != nil {
		t.Errorf("a session after one closed: %v", err)
	}
}

// overLimit is the JSON-RPC error of a refused call, or nil.
func overLimit(t *testing.T, cs *mcp.ClientSession, tool string) *jsonrpc.Error {
	t.Helper()
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err == nil {
		return nil
	}
	var jerr *jsonrpc.Error
	if !errors.As(err, &jerr) {
		t.Fatalf("%s: %v, want a JSON-RPC error", tool, err)
	}
	return jerr
}

// wantOverLimit checks that a call on cs is refused with CodeOverLimit and
// message, while one on other is served.
func wantOverLimit(t *testing.T, cs *mcp.ClientSession, message string, other *mcp.ClientSession) {
	t.Helper()
	if jerr := overLimit(t, cs, "list"); jerr == nil || jerr.Code != mcpserver.CodeOverLimit || jerr.Message != message {
		t.Errorf("a call over the limit: %v, want %d %q", jerr, mcpserver.CodeOverLimit, message)
	}
	if jerr := overLimit(t, other, "list"); jerr != nil {
		t.Errorf("a call elsewhere: %v", jerr)
	}
}

// TestCallsPerSession: a call beyond the limit of calls in flight is
// refused with CodeOverLimit; another session is not affected.
func TestCallsPerSession(t *testing.T) {
	fx := newFixtureWith(t, mcpserver.Config{MaxCallsPerSession: 1})
	calls, _ := fx.probe(t, make(chan struct{}))
	base := fx.serveHTTP(t, mcpserver.HTTPOptions{})
	busy, other := mustDial(t, base, ""), mustDial(t, base, "")
	go busy.CallTool(t.Context(), &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{}})
	await(t, calls, "the first call to start")
	wantOverLimit(t, busy, "too many calls in flight in this session (the limit is 1)", other)
}

// TestCallsPerSecond: each token has its budget; a call over it is refused
// with CodeOverLimit, and another token is not affected.
func TestCallsPerSecond(t *testing.T) {
	fx := newFixtureWith(t, mcpserver.Config{CallsPerSecond: 2})
	base := fx.serveHTTP(t, mcpserver.HTTPOptions{Tokens: []string{"alice", "bob"}})
	alice, alice2, bob := mustDial(t, base, "alice"), mustDial(t, base, "alice"), mustDial(t, base, "bob")
	for i, cs := range []*mcp.ClientSession{alice, alice2} {
		if jerr := overLimit(t, cs, "list"); jerr != nil {
			t.Fatalf("call %d within the budget: %v", i+1, jerr)
		}
	}
	wantOverLimit(t, alice2, "too many calls: over 2 per second for this token", bob)
}

// TestHTTPUnknownSession: an unknown or expired session ID gets 404, as the
// MCP specification requires, so that a client starts a new session.
func TestHTTPUnknownSession(t *testing.T) {
	fx := newFixture(t)
	base := fx.serveHTTP(t, mcpserver.HTTPOptions{})
	header := map[string]string{"Mcp-Session-Id": "gone", "Mcp-Protocol-Version": "2025-11-25"}
	if code, body := post(t, base, header, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); code != http.StatusNotFound || body != "session not found\n" {
		t.Errorf("unknown session: %d %q, want 404", code, body)
	}
}

// TestLargeWrite: a write larger than the arguments the SDK decodes itself
// reaches the file byte for byte, escapes included, over stdio and HTTP;
// the session goes on.
func TestLargeWrite(t *testing.T) {
	fx := newFixture(t)
	fx.file(t, "a.txt", "alpha\n")
	content := strings.Repeat("line \"quoted\" \\ tab\t é ☃ \u2028 end\n", (3<<20)/40)
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	if _, err := fx.server.MCP().Connect(t.Context(), fx.server.IOTransport(serverIn, serverOut, 0), nil); err != nil {
		t.Fatal(err)
	}
	stdio, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(t.Context(), &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdio.Close() })
	for transport, cs := range map[string]*mcp.ClientSession{"stdio": stdio, "http": mustDial(t, fx.serveHTTP(t, mcpserver.HTTPOptions{}), "")} {
		name := transport + ".txt"
		if res := call(t, cs, "write", map[string]any{"file_path": name, "content": content}); res.IsError {
			t.Fatalf("%s: write: %q", transport, text(t, res))
		}
		if got, err := os.ReadFile(filepath.Join(fx.d.Workspace, name)); err != nil || string(got) != content {
			t.Errorf("%s: the file holds %d bytes (%v), want the %d written", transport, len(got), err, len(content))
		}
		if res := call(t, cs, "read", map[string]any{"file_path": "a.txt"}); res.IsError {
			t.Errorf("%s: read after the write: %q", transport, text(t, res))
		}
	}
}

// events records the server's mcpevents as short strings, in order.
type events struct {
	mu  sync.Mutex
	got []string
}

func recordEvents(t *testing.T, ctx *runtime.Context) *events {
	t.Helper()
	ev := &events{}
	add := func(s string) error {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		ev.got = append(ev.got, s)
		return nil
	}
	_, err1 := mcpevents.SessionEvent.On(ctx, func(s mcpevents.Session) error {
		return add(fmt.Sprintf("session open=%t id=%t", s.Open, s.ID != ""))
	})
	_, err2 := mcpevents.AuthFailureEvent.On(ctx, func(a mcpevents.AuthFailure) error {
		return add(fmt.Sprintf("auth failure remote=%t", a.Remote != ""))
	})
	_, err3 := mcpevents.RefusalEvent.On(ctx, func(r mcpevents.Refusal) error { return add("refused " + string(r.Limit)) })
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	return ev
}

// await returns the events once there are n (a session closes after its
// client has gone).
func (ev *events) await(t *testing.T, n int) []string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		ev.mu.Lock()
		got := slices.Clone(ev.got)
		ev.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
	}
}

// TestEvents: the server tells observers what only it knows: a session
// opening at its initialize and closing, 401s (missing and wrong tokens)
// and each limit's refusals.
func TestEvents(t *testing.T) {
	fx := newFixture(t)
	ev := recordEvents(t, fx.d.Root)
	fx.file(t, "a.txt", "alpha\n")
	base := fx.serveHTTP(t, mcpserver.HTTPOptions{Tokens: []string{"secret"}, MaxSessions: 1, MaxMessage: 64 << 10})
	for _, auth := range []string{"", "Bearer wrong"} {
		post(t, base, map[string]string{"Authorization": auth}, initialize)
	}
	cs := mustDial(t, base, "secret")
	call(t, cs, "read", map[string]any{"file_path": "a.txt"})
	if code, _ := post(t, base, map[string]string{"Authorization": "Bearer secret"}, initialize); code != http.StatusServiceUnavailable {
		t.Fatalf("a second session: %d, want 503", code)
	}
	cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"file_path": "b.txt", "content": strings.Repeat("x", 64<<10)}})
	cs.Close()
	want := []string{
		"auth failure remote=true",
		"auth failure remote=true",
		"session open=true id=true",
		"refused sessions",
		"refused message",
		"session open=false id=true",
	}
	if got := ev.await(t, len(want)); !slices.Equal(got, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestEventsCallLimits: a call over the calls a session runs at once, and
// one over its token's rate, is refused and said so (the rate is checked
// first).
func TestEventsCallLimits(t *testing.T) {
	fx := newFixtureWith(t, mcpserver.Config{CallsPerSecond: 2, MaxCallsPerSession: 1})
	ev := recordEvents(t, fx.d.Root)
	hold := make(chan struct{})
	defer close(hold)
	calls, _ := fx.probe(t, hold)
	cs := fx.connect(t, nil, nil)
	go cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{}})
	await(t, calls, "the first call to start")
	for range 2 {
		if overLimit(t, cs, "list") == nil {
			t.Error("a call over a limit was served")
		}
	}
	want := []string{"session open=true id=false", "refused calls_in_flight", "refused rate"}
	if got := ev.await(t, len(want)); !slices.Equal(got, want) {
		t.Errorf("events: %q, want %q", got, want)
	}
}

// TestDrain: from the start of a drain /readyz answers 503, a new session
// is refused with 503 and a new call of an open session with 404 (the
// client's ErrSessionMissing); the call in flight is answered, then Drain
// returns.
func TestDrain(t *testing.T) {
	fx := newFixture(t)
	hold := make(chan struct{})
	calls, _ := fx.probe(t, hold)
	base := fx.serveHTTP(t, mcpserver.HTTPOptions{})
	busy, idle := mustDial(t, base, ""), mustDial(t, base, "")
	answered := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := busy.CallTool(t.Context(), &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{}})
		if err != nil {
			t.Errorf("the call in flight: %v", err)
		}
		answered <- res
	}()
	await(t, calls, "the call to start")
	drained := make(chan error, 1)
	go func() { drained <- fx.server.Drain(t.Context()) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable && string(body) == "draining\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz during the drain: %d %q, want 503 \"draining\\n\"", resp.StatusCode, body)
		}
	}
	if code, body := post(t, base, nil, initialize); code != http.StatusServiceUnavailable || body != "the server is shutting down: open the session elsewhere\n" {
		t.Errorf("a new session during the drain: %d %q, want 503", code, body)
	}
	if _, err := idle.CallTool(t.Context(), &mcp.CallToolParams{Name: "list", Arguments: map[string]any{}}); !errors.Is(err, mcp.ErrSessionMissing) {
		t.Errorf("a new call during the drain: %v, want ErrSessionMissing", err)
	}
	select {
	case err := <-drained:
		t.Fatalf("Drain returned %v with a call in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(hold)
	if res := await(t, answered, "the call in flight to be answered"); res == nil || res.IsError || text(t, res) != "ok" {
		t.Fatalf("the call in flight: %+v", res)
	}
	if err := await(t, drained, "Drain to return"); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	if _, err := busy.CallTool(t.Context(), &mcp.CallToolParams{Name: "list", Arguments: map[string]any{}}); !errors.Is(err, mcp.ErrSessionMissing) {
		t.Errorf("a new call after the drain: %v, want ErrSessionMissing", err)
	}
}

// TestDrainCut: a drain whose context ends first cancels the calls still in
// flight and says so.
func TestDrainCut(t *testing.T) {
	fx := newFixture(t)
	calls, ended := fx.probe(t, make(chan struct{}))
	base := fx.serveHTTP(t, mcpserver.HTTPOptions{})
	cs := mustDial(t, base, "")
	go cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{}})
	await(t, calls, "the call to start")
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := fx.server.Drain(ctx); !errors.Is(err, mcpserver.ErrDrainCut) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Drain: %v, want ErrDrainCut and the deadline", err)
	}
	if err := await(t, ended, "the call's context to end"); !errors.Is(err, context.Canceled) {
		t.Errorf("the call's context ended with %v, want context.Canceled", err)
	}
}
