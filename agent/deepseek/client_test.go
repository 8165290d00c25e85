package deepseek

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/agent/scripted"
	"github.com/gordis-run/gordis/registry"
)

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		ms, s string
		want  time.Duration
		ok    bool
	}{
		{"", "", 0, false},
		{"", "0", 0, true},
		{"", "2", 2 * time.Second, true},
		{"", "0.25", 250 * time.Millisecond, true},
		{"", "-1", 0, false},
		{"", "NaN", 0, false},
		{"", "soon", 0, false},
		{"", "1e300", math.MaxInt64, true},
		{"", "Mon, 02 Jan 2006 15:04:05 GMT", 0, true}, // in the past: at once
		{"1500", "9", 1500 * time.Millisecond, true},   // milliseconds first
		{"x", "3", 3 * time.Second, true},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.ms != "" {
			h.Set("Retry-After-Ms", tt.ms)
		}
		if tt.s != "" {
			h.Set("Retry-After", tt.s)
		}
		got, ok := retryAfter(h)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Retry-After-Ms %q, Retry-After %q: %v, %v; want %v, %v", tt.ms, tt.s, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRetryDelay(t *testing.T) {
	res := func(status int, retryAfter string) *http.Response {
		r := &http.Response{StatusCode: status, Header: http.Header{}}
		if retryAfter != "" {
			r.Header.Set("Retry-After", retryAfter)
		}
		return r
	}
	tests := []struct {
		name     string
		maxDelay time.Duration
		res      *http.Response
		attempt  int
		min, max time.Duration
		retry    bool
	}{
		{"connection error, first backoff", 0, nil, 0, 375 * time.Millisecond, 500 * time.Millisecond, true},
		{"backoff doubles", 0, res(503, ""), 2, 1500 * time.Millisecond, 2 * time.Second, true},
		{"backoff capped at 8s", 0, res(500, ""), 10, 6 * time.Second, 8 * time.Second, true},
		{"backoff capped by MaxRetryDelay", time.Second, res(429, ""), 5, 750 * time.Millisecond, time.Second, true},
		{"huge attempt does not overflow", 0, res(500, ""), 200, 6 * time.Second, 8 * time.Second, true},
		{"Retry-After honoured exactly", 0, res(429, "3"), 0, 3 * time.Second, 3 * time.Second, true},
		{"Retry-After beyond 2 minutes fails the call", 0, res(429, "121"), 0, 121 * time.Second, 121 * time.Second, false},
		{"Retry-After beyond MaxRetryDelay fails the call", time.Second, res(503, "2"), 0, 2 * time.Second, 2 * time.Second, false},
		{"408", 0, res(408, ""), 0, 375 * time.Millisecond, 500 * time.Millisecond, true},
		{"409", 0, res(409, ""), 0, 375 * time.Millisecond, 500 * time.Millisecond, true},
		{"400 is final", 0, res(400, ""), 0, 0, 0, false},
		{"401 is final even with Retry-After", 0, res(401, "1"), 0, 0, 0, false},
		{"402 is final", 0, res(402, ""), 0, 0, 0, false},
	}
	for _, tt := range tests {
		m := &Model{cfg: Config{MaxRetryDelay: tt.maxDelay}}
		for range 20 { // jitter is random
			d, retry := m.retryDelay(tt.res, tt.attempt)
			if retry != tt.retry || d < tt.min || d > tt.max {
				t.Fatalf("%s: %v, %v; want [%v, %v], %v", tt.name, d, retry, tt.min, tt.max, tt.retry)
			}
		}
	}
}

// Error bodies in the shapes servers send; the code may be a number.
func TestStatusErrors(t *testing.T) {
	tests := []struct {
		status int
		body   string
		code   string
		want   string
	}{
		{400, `{"error":{"message":"This model's maximum context length is 131072 tokens","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`,
			agent.CodeContextExceeded, "model: the conversation is longer than the model's context window: This model's maximum context length is 131072 tokens (HTTP 400, CONTEXT_WINDOW_EXCEEDED)"},
		{400, `{"error":{"message":"too long","code":"context_length_exceeded"}}`,
			agent.CodeContextExceeded, "model: the conversation is longer than the model's context window: too long (HTTP 400, CONTEXT_WINDOW_EXCEEDED)"},
		{400, `{"error":{"message":"bad tools","code":400}}`,
			agent.CodeInvalidRequest, "model: the request was rejected: bad tools (HTTP 400, INVALID_REQUEST)"},
		{403, `{"error":{"message":"forbidden region"}}`,
			agent.CodeAuth, "model: authentication failed, check DEEPSEEK_API_KEY: forbidden region (HTTP 403, AUTH)"},
		{404, `<html>not here</html>`, agent.CodeHTTP, "model: Not Found (HTTP 404, HTTP_ERROR)"},
		{502, ``, agent.CodeServer, "model: the server failed: Bad Gateway (HTTP 502, SERVER)"},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("x-deepseek-request-id", "req-7")
			w.WriteHeader(tt.status)
			io.WriteString(w, tt.body)
		}))
		m, _ := New(Config{APIKey: "k", BaseURL: srv.URL})
		_, err := m.Complete(context.Background(), firstRequest())
		srv.Close()
		var me *agent.ModelError
		if !errors.As(err, &me) || me.Code != tt.code || err.Error() != tt.want || me.RequestID != "req-7" {
			t.Errorf("HTTP %d %s:\n got %v (request id %q)\nwant %s", tt.status, tt.body, err, me.RequestID, tt.want)
		}
	}
}

// "after N retries" counts the retries made, not the ones allowed.
func TestRetriesCountedInMessage(t *testing.T) {
	h := scripted.New(nil)
	h.Inject(scripted.Fault{Status: 503}, scripted.Fault{Status: 429, RetryAfter: "3600"})
	m, _ := serve(t, h, Config{MaxRetries: 5})
	_, err := m.Complete(context.Background(), firstRequest())
	if want := "model: rate limited after 1 retries, try again later: Too Many Requests (HTTP 429, RATE_LIMIT)"; err == nil || err.Error() != want {
		t.Fatalf("err %v\nwant %s", err, want)
	}
	if h.Requests() != 2 {
		t.Fatalf("hits %d, want 2", h.Requests())
	}
}

// A connection dropped before any answer is retried; when every attempt
// fails the error is TRANSPORT.
func TestConnectionErrorsRetried(t *testing.T) {
	var hits atomic.Int32
	var ok http.Handler = scripted.New(nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= 2 {
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
			return
		}
		ok.ServeHTTP(w, r)
	}))
	defer srv.Close()
	m, _ := New(Config{APIKey: "k", BaseURL: srv.URL, MaxRetries: 2, MaxRetryDelay: time.Millisecond})
	if _, err := m.Complete(context.Background(), firstRequest()); err != nil || hits.Load() != 3 {
		t.Fatalf("err %v, hits %d", err, hits.Load())
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	m, _ = New(Config{APIKey: "k", BaseURL: "http://" + addr, MaxRetries: 1, MaxRetryDelay: time.Millisecond})
	_, err = m.Complete(context.Background(), firstRequest())
	if !errors.Is(err, &agent.ModelError{Code: agent.CodeTransport}) || !strings.Contains(err.Error(), "cannot reach http://"+addr) {
		t.Fatalf("err %v", err)
	}
}

// Failures inside a 200 stream: an error event, a chunk that is not JSON,
// an event too large, a connection reset after some chunks.
func TestStreamFailures(t *testing.T) {
	const first = `data: {"choices":[{"index":0,"delta":{"content":"a"}}]}` + "\n\n"
	tests := []struct {
		name string
		body string
		code string
		want string
	}{
		{"error event", first + `data: {"error":{"message":"overloaded","type":"server_error"}}` + "\n\n", agent.CodeServer,
			"model: the server failed mid-stream: overloaded (SERVER)"},
		{"not JSON", first + "data: {\"choices\":\n\n", agent.CodeMalformed,
			"model: the server sent malformed data: unexpected end of JSON input (MALFORMED_RESPONSE)"},
		{"event too large", "data: " + strings.Repeat("x", maxEvent+1), agent.CodeStreamClosed,
			"model: the response stream broke: an event is larger than 16 MiB (STREAM_CLOSED)"},
		{"tool call index out of range", `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1024,"id":"c","function":{"name":"x"}}]}}]}` + "\n\n", agent.CodeMalformed,
			"model: tool call index 1024 out of range (MALFORMED_RESPONSE)"},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, tt.body)
		}))
		m, _ := New(Config{APIKey: "k", BaseURL: srv.URL})
		_, err := m.Complete(context.Background(), firstRequest())
		srv.Close()
		if !errors.Is(err, &agent.ModelError{Code: tt.code}) || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.name, err, tt.want)
		}
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Length", "1000") // promises more than it sends
		io.WriteString(w, first)
	}))
	defer srv.Close()
	m, _ := New(Config{APIKey: "k", BaseURL: srv.URL})
	_, err := m.Complete(context.Background(), firstRequest())
	if !errors.Is(err, &agent.ModelError{Code: agent.CodeStreamClosed}) || !strings.Contains(err.Error(), "the response stream broke: unexpected EOF") {
		t.Fatalf("cut body: %v", err)
	}
}

func TestNewRejectsRelativeBaseURL(t *testing.T) {
	for _, base := range []string{"api.deepseek.com", "/v1", "http://"} {
		if _, err := New(Config{APIKey: "k", BaseURL: base}); err == nil || !strings.Contains(err.Error(), "not an absolute URL") {
			t.Errorf("%q: err %v", base, err)
		}
	}
}

// The endpoint joins the base URL with or without its trailing slash.
func TestEndpoint(t *testing.T) {
	for base, want := range map[string]string{
		"https://api.deepseek.com":     "https://api.deepseek.com/chat/completions",
		"https://api.deepseek.com/":    "https://api.deepseek.com/chat/completions",
		"http://localhost:8080/v1":     "http://localhost:8080/v1/chat/completions",
		"http://localhost:8080/v1/":    "http://localhost:8080/v1/chat/completions",
		"https://gw.example/deepseek/": "https://gw.example/deepseek/chat/completions",
	} {
		m, err := New(Config{APIKey: "k", BaseURL: base})
		if err != nil {
			t.Fatal(err)
		}
		if m.endpoint != want {
			t.Errorf("%s: %q, want %s", base, m.endpoint, want)
		}
	}
}

// A tool whose parameters are not JSON fails before anything is sent.
func TestUnencodableRequest(t *testing.T) {
	h := scripted.New(nil)
	m, _ := serve(t, h, Config{MaxRetries: 2})
	req := firstRequest()
	req.Tools = []registry.Definition{{Name: "bad", Description: "Bad.", Parameters: json.RawMessage(`{"type":`)}}
	_, err := m.Complete(context.Background(), req)
	if !errors.Is(err, &agent.ModelError{Code: agent.CodeInvalidRequest}) || !strings.Contains(err.Error(), "the request cannot be encoded") || h.Requests() != 0 {
		t.Fatalf("err %v, %d requests", err, h.Requests())
	}
}
