// Package scripted is an OpenAI-compatible chat-completions server whose
// replies follow a script. Each reply is a function of the request: the
// phase is the number of assistant messages after the last user message, and
// the request must be a protocol-correct continuation (paired tool results,
// reasoning passed back, declared tools, string arguments...) or the server
// answers with a DeepSeek-shaped 400 naming the rule that was broken.
//
// The demo serves it in-process (agent/inproc) when no API key is set, so the
// keyless demo runs the same adapter as the real API; tests serve it over
// httptest as the protocol fake, with Faults for the failure paths.
package scripted

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// Step is one scripted assistant reply: tool calls, or a final text.
type Step struct {
	// Reasoning is the thinking text; every reply carries reasoning_content
	// (possibly "") as DeepSeek's thinking mode does.
	Reasoning string `json:"reasoning,omitempty"`
	Calls     []Call `json:"calls,omitempty"`
	Text      string `json:"text,omitempty"`
	// Expect must occur in the tool results the request carries for the
	// previous step (substring match).
	Expect string `json:"expect,omitempty"`
	// Finish overrides the finish reason ("length", "content_filter"...);
	// by default it is "tool_calls" with calls and "stop" without.
	Finish string `json:"finish,omitempty"`
}

// Call is one scripted tool call.
type Call struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

//go:embed script.json
var defaultScript []byte

// DefaultScript is the demo conversation: list ".", grep for "status:
// draft", read notes.md, edit "status: draft" to "status: reviewed", read
// it again, answer.
func DefaultScript() []Step {
	var s []Step
	if err := json.Unmarshal(defaultScript, &s); err != nil {
		panic("scripted: embedded script: " + err.Error())
	}
	return s
}

// Prompt is the user prompt the default script answers.
const Prompt = "Please mark notes.md as reviewed."

// Fault replaces the reply to one request (tests).
type Fault struct {
	Status     int    // answer with this HTTP error status (DeepSeek-shaped body)
	RetryAfter string // Retry-After header value, with Status
	Truncate   bool   // stream part of the reply, then end without finish or [DONE]
	Stall      bool   // send the headers, then wait for the client to give up
}

// Handler serves POST /chat/completions (and /v1/chat/completions).
type Handler struct {
	Script []Step
	// APIKey, when set, must arrive as "Authorization: Bearer <APIKey>".
	APIKey string

	mu       sync.Mutex
	faults   []Fault
	requests int
}

var _ http.Handler = (*Handler)(nil)

// New returns a handler for script (DefaultScript when nil).
func New(script []Step) *Handler {
	if script == nil {
		script = DefaultScript()
	}
	return &Handler{Script: script}
}

// Inject queues faults; each one answers the next request instead of the script.
func (h *Handler) Inject(faults ...Fault) {
	h.mu.Lock()
	h.faults = append(h.faults, faults...)
	h.mu.Unlock()
}

// Requests counts the chat requests received (faulted ones included).
func (h *Handler) Requests() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requests
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/chat/completions" && r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "not_found", "no route "+r.URL.Path)
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method "+r.Method+" not allowed")
		return
	}
	h.mu.Lock()
	h.requests++
	var fault *Fault
	if len(h.faults) > 0 {
		fault = &h.faults[0]
		h.faults = h.faults[1:]
	}
	h.mu.Unlock()

	if h.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+h.APIKey {
		writeError(w, http.StatusUnauthorized, "authentication_error", "Authentication Fails, Your api key is invalid")
		return
	}
	if fault != nil && fault.Status != 0 {
		if fault.RetryAfter != "" {
			w.Header().Set("Retry-After", fault.RetryAfter)
		}
		writeError(w, fault.Status, errorType(fault.Status), http.StatusText(fault.Status))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "cannot read body: "+err.Error())
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid JSON body: "+err.Error())
		return
	}
	phase, err := h.check(&req)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	c := h.complete(phase, &req, len(body))
	switch {
	case !req.Stream:
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(c.message())
	case fault != nil && fault.Stall:
		startStream(w)
		<-r.Context().Done()
	default:
		startStream(w)
		events, finishAt := c.chunks(req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
		if fault != nil && fault.Truncate {
			events = events[:min(len(events)/2, finishAt)]
		}
		for _, e := range events {
			if _, err := w.Write(e); err != nil {
				return
			}
			flush(w)
		}
	}
}

func startStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush(w)
}

// flush sends what was written so far, when the writer can.
func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// writeError answers in DeepSeek's error shape.
func writeError(w http.ResponseWriter, status int, typ, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":%q,"param":null,"code":"invalid_request_error"}}`+"\n", message, typ)
}

func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusPaymentRequired:
		return "insufficient_balance"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// violation is a broken protocol rule; its text becomes the 400 message.
func violation(rule, format string, args ...any) error {
	return fmt.Errorf("%s: %s", rule, fmt.Sprintf(format, args...))
}

// toolText joins, in order, the contents of the tool messages that follow
// the last assistant message: the results of the previous step.
func toolText(msgs []message) string {
	first := len(msgs)
	for first > 0 && msgs[first-1].Role == "tool" {
		first--
	}
	var b strings.Builder
	for _, m := range msgs[first:] {
		var s string
		json.Unmarshal(m.Content, &s)
		b.WriteString(s)
		b.WriteByte('\n')
	}
	return b.String()
}
