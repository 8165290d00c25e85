package scripted

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const tools = `"tools":[
 {"type":"function","function":{"name":"list","parameters":{"type":"object"}}},
 {"type":"function","function":{"name":"grep","parameters":{"type":"object"}}},
 {"type":"function","function":{"name":"read","parameters":{"type":"object"}}},
 {"type":"function","function":{"name":"edit","parameters":{"type":"object"}}}]`

func post(h http.Handler, path, body string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	return w
}

// The request-side rules (research §4.2 and §5.2): each broken rule is a
// DeepSeek-shaped 400 naming it.
func TestRejectsProtocolMistakes(t *testing.T) {
	user := `{"role":"user","content":"go"}`
	call := `{"role":"assistant","content":"","reasoning_content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"list","arguments":"{}"}}]}`
	tests := []struct{ name, body, want string }{
		{"no model", `{"messages":[` + user + `],` + tools + `}`, "model: must be set"},
		{"no messages", `{"model":"m",` + tools + `}`, "messages: must not be empty"},
		{"stream without usage", `{"model":"m","stream":true,"messages":[` + user + `],` + tools + `}`, "stream_options: a streaming request must set include_usage"},
		{"bad tool type", `{"model":"m","messages":[` + user + `],"tools":[{"type":"x","function":{"name":"list","parameters":{"type":"object"}}}]}`, `tools: tools[0].type is "x"`},
		{"duplicate tool", `{"model":"m","messages":[` + user + `],"tools":[{"type":"function","function":{"name":"a","parameters":{"type":"object"}}},{"type":"function","function":{"name":"a","parameters":{"type":"object"}}}]}`, `duplicate function name "a"`},
		{"schema not object", `{"model":"m","messages":[` + user + `],"tools":[{"type":"function","function":{"name":"a","parameters":{"type":"string"}}}]}`, `a: parameters must be a JSON Schema object`},
		{"bad tool_choice", `{"model":"m","tool_choice":"sometimes","messages":[` + user + `],` + tools + `}`, `tool_choice: unknown mode "sometimes"`},
		{"unknown role", `{"model":"m","messages":[{"role":"robot","content":"x"}],` + tools + `}`, `role "robot"`},
		{"empty assistant", `{"model":"m","messages":[` + user + `,{"role":"assistant","content":""}],` + tools + `}`, "content or tool_calls must be set"},
		{"missing tool result", `{"model":"m","messages":[` + user + `,` + call + `]` + `,` + tools + `}`, "pairing: tool call c1 has no tool message"},
		{"wrong tool id", `{"model":"m","messages":[` + user + `,` + call + `,{"role":"tool","tool_call_id":"c2","content":"x"}],` + tools + `}`, `tool_call_id is "c2", want "c1"`},
		{"stray tool message", `{"model":"m","messages":[` + user + `,{"role":"tool","tool_call_id":"c1","content":"x"}],` + tools + `}`, "answers no pending tool call"},
		{"user between call and result", `{"model":"m","messages":[` + user + `,` + call + `,` + user + `],` + tools + `}`, `is "user" but tool call c1 has no tool message`},
		{"no reasoning passback", `{"model":"m","messages":[` + user + `,{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"list","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"notes.md"}],` + tools + `}`, "reasoning_content in the thinking mode must be passed back"},
		{"undeclared tool", `{"model":"m","messages":[` + user + `,{"role":"assistant","content":"","reasoning_content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}],` + tools + `}`, `calls "bash", which is not a declared tool`},
		{"object arguments", `{"model":"m","messages":[` + user + `,{"role":"assistant","content":"","reasoning_content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"list","arguments":{}}}]},{"role":"tool","tool_call_id":"c1","content":"x"}],` + tools + `}`, "arguments must be a JSON string"},
		{"duplicate call id", `{"model":"m","messages":[` + user + `,` + call + `,{"role":"tool","tool_call_id":"c1","content":"x"},` + call + `,{"role":"tool","tool_call_id":"c1","content":"x"}],` + tools + `}`, `id "c1" is empty or not unique`},
		{"expectation", `{"model":"m","messages":[` + user + `,` + call + `,{"role":"tool","tool_call_id":"c1","content":"empty dir"}],` + tools + `}`, `phase 1: the previous tool results do not contain "notes.md"`},
		{"script exhausted", `{"model":"m","messages":[` + user + strings.Repeat(`,{"role":"assistant","content":"x"}`, 6) + `],` + tools + `}`, "phase 6 requested, the script has 6 steps"},
		{"undeclared script tool", `{"model":"m","messages":[` + user + `],"tools":[{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}]}`, `phase 0 calls "list", which the request does not declare`},
		{"invalid JSON", `{"model":`, "invalid JSON body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := post(New(nil), "/chat/completions", tt.body)
			if w.Code != http.StatusBadRequest {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			var e struct {
				Error struct{ Message, Type string }
			}
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Type != "invalid_request_error" {
				t.Fatalf("body %s", w.Body)
			}
			if !strings.Contains(e.Error.Message, tt.want) {
				t.Fatalf("message %q, want %q", e.Error.Message, tt.want)
			}
		})
	}
}

func TestRoutesAndAuth(t *testing.T) {
	h := New(nil)
	if w := post(h, "/embeddings", "{}"); w.Code != http.StatusNotFound {
		t.Errorf("unknown route: %d", w.Code)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/chat/completions", nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", w.Code)
	}
	h.APIKey = "k"
	if w := post(h, "/v1/chat/completions", "{}"); w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "authentication_error") {
		t.Errorf("no key: %d %s", w.Code, w.Body)
	}
}

// The wire shape of a streamed reply (research §4.2 fidelity features).
func TestStreamEncoding(t *testing.T) {
	h := New([]Step{{Reasoning: "think", Calls: []Call{
		{Name: "list", Args: json.RawMessage(`{"path":"."}`)},
		{Name: "read", Args: json.RawMessage(`{"file_path":"notes.md"}`)},
	}}})
	w := post(h, "/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"go"}],`+tools+`}`)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, type %q", w.Code, w.Header().Get("Content-Type"))
	}
	events := strings.Split(strings.TrimSuffix(w.Body.String(), "\n\n"), "\n\n")
	want := []string{
		`{"id":"scripted-0","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":""},"finish_reason":null}]}`,
		`{"id":"scripted-0","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"think"},"finish_reason":null}]}`,
		`{"id":"scripted-0","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_0_0","type":"function","function":{"name":"list","arguments":""}}]},"finish_reason":null}]}`,
		`{"id":"scripted-0","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_0_1","type":"function","function":{"name":"read","arguments":""}}]},"finish_reason":null}]}`,
		`{"id":"scripted-0","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path"}}]},"finish_reason":null}]}`,
		`{"id":"scripted-0","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"file_path\""}}]},"finish_reason":null}]}`,
		`{"id":"scripted-0","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\":\".\"}"}}]},"finish_reason":null}]}`,
		`{"id":"scripted-0","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":":\"notes.md\"}"}}]},"finish_reason":null}]}`,
	}
	if len(events) != len(want)+3 {
		t.Fatalf("%d events:\n%s", len(events), w.Body)
	}
	for i, wnt := range want {
		if events[i] != "data: "+wnt {
			t.Errorf("event %d\n got %s\nwant data: %s", i, events[i], wnt)
		}
	}
	finish, trailing := events[len(want)], events[len(want)+1]
	if !strings.Contains(finish, `"finish_reason":"tool_calls"`) || !strings.Contains(finish, `"prompt_cache_hit_tokens"`) {
		t.Errorf("finish chunk %s", finish)
	}
	if !strings.Contains(trailing, `"choices":[]`) || !strings.Contains(trailing, `"usage":{`) {
		t.Errorf("trailing chunk %s", trailing)
	}
	if events[len(events)-1] != "data: [DONE]" {
		t.Errorf("last event %s", events[len(events)-1])
	}
}

func TestWholeReply(t *testing.T) {
	w := post(New(nil), "/chat/completions", `{"model":"m","messages":[{"role":"user","content":"go"}],`+tools+`}`)
	var c struct {
		ID      string
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Content          *string
				ReasoningContent *string `json:"reasoning_content"`
				ToolCalls        []struct {
					ID       string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &c); err != nil {
		t.Fatal(err, w.Body)
	}
	m := c.Choices[0].Message
	if c.ID != "scripted-0" || c.Choices[0].FinishReason != "tool_calls" || m.Content == nil || *m.Content != "" ||
		m.ReasoningContent == nil || len(m.ToolCalls) != 1 || m.ToolCalls[0].Function.Arguments != `{"path": "."}` {
		t.Fatalf("%s", w.Body)
	}
}

func TestTruncateStopsBeforeFinish(t *testing.T) {
	for _, script := range [][]Step{nil, {{}}} { // the demo's, and the shortest reply
		h := New(script)
		h.Inject(Fault{Truncate: true})
		w := post(h, "/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"go"}],`+tools+`}`)
		if body := w.Body.String(); strings.Contains(body, "finish_reason\":\"") || strings.Contains(body, "[DONE]") || !strings.Contains(body, "data: ") {
			t.Fatalf("truncated body:\n%s", body)
		}
	}
}

// FuzzHandler: arbitrary bodies are answered (200 or a 4xx), never a panic.
func FuzzHandler(f *testing.F) {
	f.Add(`{"model":"m","messages":[{"role":"user","content":"go"}],` + tools + `}`)
	f.Add(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"reasoning_content":"","tool_calls":[{"id":"a","type":"function","function":{"name":"list","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"notes.md"}],` + tools + `}`)
	f.Add(`{"model":"m","tool_choice":{"type":"function","function":{"name":"list"}},"messages":[{"role":"user"}]}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, body string) {
		w := post(New(nil), "/chat/completions", body)
		if w.Code != http.StatusOK && w.Code != http.StatusBadRequest {
			t.Fatalf("status %d", w.Code)
		}
	})
}
