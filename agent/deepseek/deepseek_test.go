package deepseek

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/agent/inproc"
	"github.com/gordis-run/gordis/agent/scripted"
	"github.com/gordis-run/gordis/registry"
)

// defs are the default tools' shapes, enough for the scripted server's checks.
var defs = []registry.Definition{
	{Name: "list", Description: "List.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"number"}}}`)},
	{Name: "grep", Description: "Grep.", Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}`)},
	{Name: "read", Description: "Read.", Parameters: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`)},
	{Name: "edit", Description: "Edit.", Parameters: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"}}}`)},
}

// recorder keeps the raw requests a handler received.
type recorder struct {
	next   http.Handler
	mu     sync.Mutex
	bodies [][]byte
	header []http.Header
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.bodies = append(r.bodies, body)
	r.header = append(r.header, req.Header.Clone())
	r.mu.Unlock()
	req.Body = io.NopCloser(bytes.NewReader(body))
	r.next.ServeHTTP(w, req)
}

func (r *recorder) last() ([]byte, http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bodies[len(r.bodies)-1], r.header[len(r.header)-1]
}

func serve(t *testing.T, h *scripted.Handler, cfg Config) (*Model, *recorder) {
	t.Helper()
	rec := &recorder{next: h}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	if cfg.APIKey == "" {
		cfg.APIKey = "test-key"
	}
	cfg.BaseURL = srv.URL
	cfg.MaxRetryDelay = 5 * time.Millisecond
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m, rec
}

func firstRequest() *agent.Request {
	return &agent.Request{System: "You are a test.", Messages: []agent.Message{{Role: agent.RoleUser, Text: scripted.Prompt}}, Tools: defs}
}

func TestCompleteStreamingAndWhole(t *testing.T) {
	for _, noStream := range []bool{false, true} {
		m, rec := serve(t, scripted.New(nil), Config{NoStream: noStream})
		resp, err := m.Complete(context.Background(), firstRequest())
		if err != nil {
			t.Fatalf("noStream=%v: %v", noStream, err)
		}
		want := agent.ToolCall{ID: "call_0_0", Name: "list", Arguments: `{"path": "."}`}
		if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0] != want {
			t.Errorf("noStream=%v: tool calls %+v, want %+v", noStream, resp.Message.ToolCalls, want)
		}
		if resp.Message.Reasoning == nil || *resp.Message.Reasoning != "I'll look at the workspace first." {
			t.Errorf("noStream=%v: reasoning %v", noStream, resp.Message.Reasoning)
		}
		if resp.Finish != agent.FinishToolCalls {
			t.Errorf("noStream=%v: finish %q", noStream, resp.Finish)
		}
		// Usage is reported twice when streaming; it must not be added up.
		body, header := rec.last()
		if got, want := resp.Usage.Input+resp.Usage.CacheRead, int64(len(body)/4); got != want {
			t.Errorf("noStream=%v: prompt tokens %d, want %d", noStream, got, want)
		}
		if header.Get("Authorization") != "Bearer test-key" {
			t.Errorf("auth header %q", header.Get("Authorization"))
		}
		var sent map[string]any
		json.Unmarshal(body, &sent)
		if _, ok := sent["stream_options"]; ok == noStream {
			t.Errorf("noStream=%v: stream_options present=%v", noStream, ok)
		}
	}
}

// The whole default script through the adapter: proves history
// serialisation (content "", reasoning passback, tool messages) is what the
// server accepts, and cache hits are mapped.
func TestDefaultScriptConversation(t *testing.T) {
	m, _ := serve(t, scripted.New(nil), Config{})
	req := firstRequest()
	toolOutput := map[string]string{
		"list": "notes.md", "grep": "Found 1 match\n\nnotes.md\nLine 2: status: draft",
		"read": "1: # Notes\n2: status: draft", "edit": "The file notes.md has been updated successfully.",
	}
	for step := 0; ; step++ {
		resp, err := m.Complete(context.Background(), req)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if step > 0 && resp.Usage.CacheRead == 0 {
			t.Errorf("step %d: no cache hit mapped: %+v", step, resp.Usage)
		}
		req.Messages = append(req.Messages, resp.Message)
		if len(resp.Message.ToolCalls) == 0 {
			if resp.Message.Text != "Updated notes.md: status is now reviewed." || step != 5 {
				t.Fatalf("step %d: final %q", step, resp.Message.Text)
			}
			return
		}
		for _, c := range resp.Message.ToolCalls {
			out := toolOutput[c.Name]
			if step == 4 {
				out = "1: # Notes\n2: status: reviewed"
			}
			req.Messages = append(req.Messages, agent.Message{Role: agent.RoleTool, ToolCallID: c.ID, Text: out})
		}
	}
}

func TestReasoningPassback(t *testing.T) {
	// A tool-call turn without reasoning (nil) still sends reasoning_content "".
	msgs := messages(&agent.Request{Messages: []agent.Message{
		{Role: agent.RoleUser, Text: "hi"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "a", Name: "list", Arguments: "{}"}}},
		{Role: agent.RoleTool, ToolCallID: "a", Text: "x"},
		{Role: agent.RoleAssistant, Text: "done"},
	}})
	b, _ := json.Marshal(msgs)
	want := `[{"content":"hi","role":"user"},{"content":"","tool_calls":[{"id":"a","function":{"arguments":"{}","name":"list"},"type":"function"}],"role":"assistant","reasoning_content":""},{"content":"x","tool_call_id":"a","role":"tool"},{"content":"done","role":"assistant"}]`
	if string(b) != want {
		t.Fatalf("messages\n got %s\nwant %s", b, want)
	}
}

func TestToolsJSONKeepsSchemaVerbatim(t *testing.T) {
	b, err := ToolsJSON(defs[:1])
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"function":{"name":"list","description":"List.","parameters":{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"number"}}}},"type":"function"}]`
	if string(b) != want {
		t.Fatalf("tools\n got %s\nwant %s", b, want)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name     string
		fault    *scripted.Fault
		key      string // server key; differs from the client's
		retries  int
		code     string
		hits     int
		contains string
	}{
		{name: "401 is not retried", key: "other", retries: 2, code: agent.CodeAuth, hits: 1, contains: "check DEEPSEEK_API_KEY"},
		{name: "402", fault: &scripted.Fault{Status: 402}, retries: 2, code: agent.CodeQuota, hits: 1, contains: "balance"},
		{name: "429 retries exhausted", fault: &scripted.Fault{Status: 429, RetryAfter: "0"}, code: agent.CodeRateLimit, hits: 1, contains: "rate limited"},
		{name: "500", fault: &scripted.Fault{Status: 500}, code: agent.CodeServer, hits: 1},
		{name: "stream cut before finish", fault: &scripted.Fault{Truncate: true}, retries: 2, code: agent.CodeStreamClosed, hits: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := scripted.New(nil)
			h.APIKey = tt.key
			if tt.key == "" {
				h.APIKey = "test-key"
			}
			if tt.fault != nil {
				h.Inject(*tt.fault)
			}
			m, _ := serve(t, h, Config{MaxRetries: tt.retries})
			_, err := m.Complete(context.Background(), firstRequest())
			var me *agent.ModelError
			if !errors.As(err, &me) || me.Code != tt.code {
				t.Fatalf("err %v, want code %s", err, tt.code)
			}
			if !errors.Is(err, &agent.ModelError{Code: tt.code}) {
				t.Errorf("errors.Is by code failed")
			}
			if !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("error %q does not contain %q", err, tt.contains)
			}
			if h.Requests() != tt.hits {
				t.Errorf("hits %d, want %d", h.Requests(), tt.hits)
			}
		})
	}
}

func TestReplyErrors(t *testing.T) {
	tests := []struct {
		step scripted.Step
		code string
	}{
		{scripted.Step{Text: "filtered", Finish: "content_filter"}, agent.CodeFinish},
		{scripted.Step{}, agent.CodeEmptyResponse},
	}
	for _, tt := range tests {
		for _, noStream := range []bool{false, true} {
			m, _ := serve(t, scripted.New([]scripted.Step{tt.step}), Config{NoStream: noStream})
			if _, err := m.Complete(context.Background(), firstRequest()); !errors.Is(err, &agent.ModelError{Code: tt.code}) {
				t.Errorf("%+v noStream=%v: err %v, want %s", tt.step, noStream, err, tt.code)
			}
		}
	}
}

func TestRateLimitRetriedHonouringRetryAfter(t *testing.T) {
	h := scripted.New(nil)
	h.Inject(scripted.Fault{Status: 429, RetryAfter: "0"}, scripted.Fault{Status: 503})
	m, _ := serve(t, h, Config{MaxRetries: 2})
	if _, err := m.Complete(context.Background(), firstRequest()); err != nil {
		t.Fatal(err)
	}
	if h.Requests() != 3 {
		t.Fatalf("hits %d, want 3", h.Requests())
	}
}

func TestCancelStalledStream(t *testing.T) {
	h := scripted.New(nil)
	h.Inject(scripted.Fault{Stall: true})
	m, _ := serve(t, h, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := m.Complete(ctx, firstRequest()); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

func TestTimeoutBoundsACall(t *testing.T) {
	h := scripted.New(nil)
	h.Inject(scripted.Fault{Stall: true})
	m, _ := serve(t, h, Config{Timeout: 20 * time.Millisecond})
	if _, err := m.Complete(context.Background(), firstRequest()); !errors.Is(err, &agent.ModelError{Code: agent.CodeTimeout}) {
		t.Fatalf("err %v, want TIMEOUT", err)
	}
}

// OPENAI_* variables must never reach DeepSeek (research gotcha 1).
func TestNoOpenAIEnvironmentLeaks(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "http://openai.invalid")
	t.Setenv("OPENAI_API_KEY", "sk-openai")
	t.Setenv("OPENAI_ORG_ID", "org-x")
	t.Setenv("OPENAI_PROJECT_ID", "proj-x")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Leak: yes")
	m, rec := serve(t, scripted.New(nil), Config{})
	if _, err := m.Complete(context.Background(), firstRequest()); err != nil {
		t.Fatal(err)
	}
	_, header := rec.last()
	for _, k := range []string{"OpenAI-Organization", "OpenAI-Project", "X-Leak"} {
		if v := header.Get(k); v != "" {
			t.Errorf("header %s: %q leaked", k, v)
		}
	}
	if header.Get("Authorization") != "Bearer test-key" {
		t.Errorf("auth %q", header.Get("Authorization"))
	}
}

// The keyless demo's path: the same adapter over the in-process transport.
func TestInProcessTransport(t *testing.T) {
	m, err := New(Config{
		APIKey: "offline", BaseURL: "http://scripted.invalid",
		HTTPClient: &http.Client{Transport: inproc.Transport{Handler: scripted.New(nil)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(context.Background(), firstRequest())
	if err != nil || len(resp.Message.ToolCalls) != 1 {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
}

func TestNewRequiresKey(t *testing.T) {
	if _, err := New(Config{}); err == nil || !strings.Contains(err.Error(), "DEEPSEEK_API_KEY") {
		t.Fatalf("err %v", err)
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"DEEPSEEK_API_KEY": "k", "DEEPSEEK_MODEL": "deepseek-flash", "DEEPSEEK_BASE_URL": "http://x"}
	cfg := ConfigFromEnv(func(k string) string { return env[k] })
	if cfg.APIKey != "k" || cfg.Model != "deepseek-flash" || cfg.BaseURL != "http://x" || cfg.MaxRetries != DefaultMaxRetries {
		t.Fatalf("%+v", cfg)
	}
	m, _ := New(ConfigFromEnv(func(k string) string { return map[string]string{"DEEPSEEK_API_KEY": "k"}[k] }))
	if m.Name() != DefaultModel || m.cfg.BaseURL != DefaultBaseURL {
		t.Fatalf("defaults: %s %s", m.Name(), m.cfg.BaseURL)
	}
}
