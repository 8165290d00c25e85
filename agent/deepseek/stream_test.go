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

	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/agent/inproc"
	"github.com/gordis-run/gordis/agent/scripted"
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

// The [DONE] marker is an event like any other: found when the body
// arrives a byte at a time, not when it is cut short.
func TestDoneMarkerSplitAcrossReads(t *testing.T) {
	r := newSSEReader(iotest.OneByteReader(strings.NewReader("data: {}\n\ndata: [DONE]\n\n")))
	var got []string
	for {
		data, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(data))
	}
	if strings.Join(got, "|") != "{}|[DONE]" {
		t.Fatalf("events %q", got)
	}
	r2 := newSSEReader(strings.NewReader("data: [DON"))
	if data, err := r2.next(); err != io.EOF {
		t.Fatalf("a partial marker counted: %q, %v", data, err)
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
		var u usage
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

func readEvents(body string) ([]string, error) { return readAll(strings.NewReader(body)) }

func readAll(body io.Reader) ([]string, error) {
	r := newSSEReader(body)
	var got []string
	for {
		data, err := r.next()
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, string(data))
	}
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		body string
		want []string
	}{
		{"data: a\n\ndata: b\n\n", []string{"a", "b"}},
		{"data:a\r\n\r\ndata:  b\n\n", []string{"a", " b"}},              // one space is the separator, CRLF ends lines
		{"data: a\ndata: b\n\n", []string{"a\nb"}},                       // lines of one event
		{": keep-alive\n\nevent: x\nid: 3\nretry: 9\n\n", nil},           // no data: no event
		{"event: message\ndata: {}\nid: 1\n\n", []string{"{}"}},          // other fields skipped
		{"data\n\n", []string{""}},                                       // a field with no colon
		{"\n\n\ndata: a\n\n\n", []string{"a"}},                           // blank lines between events
		{"data: a\n", []string{"a"}},                                     // open at the end, last line complete
		{"data: a\n\ndata: {\"cut", []string{"a"}},                       // a line cut short is dropped
		{"data: a\ndata: {\"cut", []string{"a"}},                         // ... even inside an event
		{"datum: a\n\ndata : b\n\n", nil},                                // field names match exactly
		{"data: [DONE]\n\ndata: after\n\n", []string{"[DONE]", "after"}}, // the reader does not judge
	}
	for _, tt := range tests {
		got, err := readEvents(tt.body)
		if err != nil || strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
			t.Errorf("%q: %q, %v; want %q", tt.body, got, err, tt.want)
		}
	}
}

// A line longer than the reader's buffer is read whole.
func TestSSEReaderLongLine(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	got, err := readEvents("data: " + long + "\n\ndata: y\n\n")
	if err != nil || len(got) != 2 || got[0] != long || got[1] != "y" {
		t.Fatalf("%d events, %v", len(got), err)
	}
}

func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{"data: a\n\n", ": c\r\ndata:b\r\ndata: c\n\n", "data: [DONE]\n\n", "data: {\"cut"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got, err := readEvents(body)
		if err != nil {
			t.Fatal(err)
		}
		// The same events however the body is split into reads, and never
		// more data than the body had.
		split, err := readAll(iotest.OneByteReader(strings.NewReader(body)))
		if err != nil || strings.Join(split, "\x00") != strings.Join(got, "\x00") || len(split) != len(got) {
			t.Fatalf("whole %q, byte by byte %q (%v)", got, split, err)
		}
		total := 0
		for _, e := range got {
			total += len(e)
		}
		if total > len(body) {
			t.Fatalf("%d bytes of data from a %d-byte body", total, len(body))
		}
	})
}

// BenchmarkStream is one streamed reply of the default script's first step
// over the in-process transport: request encoding, SSE, chunk decoding.
func BenchmarkStream(b *testing.B) {
	m, err := New(Config{APIKey: "k", BaseURL: "http://scripted.invalid",
		HTTPClient: &http.Client{Transport: inproc.Transport{Handler: scripted.New(nil)}}})
	if err != nil {
		b.Fatal(err)
	}
	req := firstRequest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Complete(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
