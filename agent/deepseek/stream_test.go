package deepseek

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/openai/openai-go/v3"

	"github.com/gordis-run/gordis/agent"
)

// A stream that has its finish chunk but never says [DONE] may have lost
// its usage or more: it is STREAM_CLOSED, not a success.
func TestFinishWithoutDoneIsStreamClosed(t *testing.T) {
	const finish = `data: {"id":"x","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}` + "\n\n"
	for _, tt := range []struct {
		body string
		ok   bool
	}{{finish, false}, {finish + "data: [DONE]\n\n", true}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, tt.body)
		}))
		m, err := New(Config{APIKey: "k", BaseURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := m.Complete(context.Background(), firstRequest())
		srv.Close()
		if tt.ok && (err != nil || resp.Message.Text != "hi") {
			t.Errorf("with [DONE]: %+v, %v", resp, err)
		}
		if !tt.ok && !errors.Is(err, &agent.ModelError{Code: agent.CodeStreamClosed}) {
			t.Errorf("without [DONE]: err %v", err)
		}
	}
}

func TestDoneMarkerSplitAcrossReads(t *testing.T) {
	var w doneWatcher
	r := &doneReader{ReadCloser: io.NopCloser(iotest.OneByteReader(strings.NewReader("data: {}\n\ndata: [DONE]\n\n"))), w: &w}
	if _, err := io.ReadAll(r); err != nil || !w.seen() {
		t.Fatalf("seen %v, err %v", w.seen(), err)
	}
	var w2 doneWatcher
	r2 := &doneReader{ReadCloser: io.NopCloser(strings.NewReader("data: [DON")), w: &w2}
	if io.ReadAll(r2); w2.seen() {
		t.Fatal("a partial marker counted")
	}
}

// Usage mapping: disjoint input and cache counts, from cached_tokens or,
// without it, DeepSeek's prompt_cache_hit_tokens; the reasoning tokens.
func TestMapUsage(t *testing.T) {
	tests := []struct {
		raw  string
		want agent.Usage
	}{
		{`{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":36,"completion_tokens_details":{"reasoning_tokens":12}}`,
			agent.Usage{Input: 36, CacheRead: 64, Output: 20, Reasoning: 12}},
		{`{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":50}}`,
			agent.Usage{Input: 50, CacheRead: 50, Output: 20}},
		{`{"prompt_tokens":7,"completion_tokens":1,"total_tokens":8}`, agent.Usage{Input: 7, Output: 1}},
	}
	for _, tt := range tests {
		var u openai.CompletionUsage
		if err := json.Unmarshal([]byte(tt.raw), &u); err != nil {
			t.Fatal(err)
		}
		if got := mapUsage(&u); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.raw, got, tt.want)
		}
	}
}

// DeepSeek sends ": keep-alive" comments while a request waits in its queue;
// hundreds of them must not fail the stream.
func TestKeepAlivesBeforeData(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, strings.Repeat(": keep-alive\n\n", 500))
		io.WriteString(w, `data: {"id":"x","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	m, _ := New(Config{APIKey: "k", BaseURL: srv.URL})
	if resp, err := m.Complete(context.Background(), firstRequest()); err != nil || resp.Message.Text != "ok" {
		t.Fatalf("%+v, %v", resp, err)
	}
}
