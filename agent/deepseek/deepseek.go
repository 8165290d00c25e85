// Package deepseek is the agent.Model for DeepSeek's OpenAI-compatible chat
// API: chat completions over net/http, streamed as server-sent events or
// whole, with retries. It is written here rather than on an SDK because the
// agent needs one endpoint and DeepSeek's reasoning_content, and the
// official openai-go client cost most of a cold build (docs/benchmarks.md,
// "Build and test cost").
package deepseek

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gordis-run/gordis/agent"
)

// Defaults.
const (
	DefaultBaseURL    = "https://api.deepseek.com"
	DefaultModel      = "deepseek-v4-flash"
	DefaultMaxRetries = 2
	DefaultTimeout    = 10 * time.Minute
)

// Config of a Model.
type Config struct {
	APIKey  string
	BaseURL string // DefaultBaseURL when ""
	Model   string // DefaultModel when ""
	// HTTPClient carries the requests (http.DefaultClient when nil); the
	// keyless demo puts an in-process transport here.
	HTTPClient *http.Client
	// MaxRetries is how often the client retries connection errors, 408,
	// 409, 429 and 5xx, honouring Retry-After. 0 means a single attempt.
	MaxRetries int
	// MaxRetryDelay caps the backoff (0: 8 s) and the Retry-After the
	// client will wait for (0: 2 minutes; a longer one fails the call).
	MaxRetryDelay time.Duration
	// Timeout bounds one model call, stream included (DefaultTimeout when 0),
	// so server keep-alives cannot stretch a call forever.
	Timeout time.Duration
	// NoStream asks for one JSON body instead of server-sent events.
	NoStream bool
}

// ConfigFromEnv reads DEEPSEEK_API_KEY, DEEPSEEK_BASE_URL and DEEPSEEK_MODEL.
func ConfigFromEnv(getenv func(string) string) Config {
	return Config{
		APIKey:     getenv("DEEPSEEK_API_KEY"),
		BaseURL:    getenv("DEEPSEEK_BASE_URL"),
		Model:      getenv("DEEPSEEK_MODEL"),
		MaxRetries: DefaultMaxRetries,
	}
}

// Model is an agent.Model backed by a chat-completions endpoint.
type Model struct {
	cfg      Config
	endpoint string // BaseURL + "/chat/completions"
}

var _ agent.Model = (*Model)(nil)

// New returns a Model; the API key is required.
func New(cfg Config) (*Model, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("deepseek: no API key (set DEEPSEEK_API_KEY)")
	}
	if cfg.MaxRetries < 0 {
		return nil, errors.New("deepseek: MaxRetries must not be negative")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	if u, err := url.Parse(cfg.BaseURL); err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("deepseek: base URL %q is not an absolute URL", cfg.BaseURL)
	}
	return &Model{cfg: cfg, endpoint: strings.TrimSuffix(cfg.BaseURL, "/") + "/chat/completions"}, nil
}

// Name returns the model name sent with each request.
func (m *Model) Name() string { return m.cfg.Model }

// Complete sends one request and assembles the reply.
func (m *Model) Complete(ctx context.Context, req *agent.Request) (*agent.Response, error) {
	callCtx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	body := chatRequest{Model: m.cfg.Model, Messages: messages(req), Tools: tools(req.Tools)}
	var resp *agent.Response
	var err error
	if m.cfg.NoStream {
		resp, err = m.whole(callCtx, body)
	} else {
		resp, err = m.stream(callCtx, body, req.OnDelta)
	}
	if err != nil {
		return nil, m.mapError(ctx, callCtx, err)
	}
	return resp, nil
}

func (m *Model) whole(ctx context.Context, body chatRequest) (*agent.Response, error) {
	res, err := m.post(ctx, body)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	var c completion
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, malformed(err)
	}
	if len(c.Choices) == 0 {
		return nil, &agent.ModelError{Code: agent.CodeMalformed, Message: "the completion has no choices"}
	}
	ch := c.Choices[0]
	a := accumulator{finish: ch.FinishReason, usage: c.Usage}
	a.text.WriteString(ch.Message.Content)
	if r := ch.Message.ReasoningContent; r != nil {
		a.reasoning.WriteString(*r)
		a.sawReasoning = true
	}
	for _, tc := range ch.Message.ToolCalls {
		p := &partialCall{id: tc.ID, name: tc.Function.Name}
		p.args.WriteString(tc.Function.Arguments)
		a.calls = append(a.calls, p)
	}
	return a.response()
}

// stream asks for server-sent events with usage and assembles them. The
// answer is complete only with a finish reason and the closing [DONE]: a
// body that ends without them lost part of the reply.
func (m *Model) stream(ctx context.Context, body chatRequest, onDelta func(agent.Delta)) (*agent.Response, error) {
	body.Stream = true
	body.StreamOptions = &streamOptions{IncludeUsage: true}
	res, err := m.post(ctx, body)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	a := accumulator{onDelta: onDelta}
	events := newSSEReader(res.Body)
	done := false
	for !done {
		data, err := events.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &agent.ModelError{Code: agent.CodeStreamClosed, Message: "the response stream broke: " + err.Error(), Err: err}
		}
		if string(data) == "[DONE]" {
			done = true
			continue
		}
		var ch chunk
		if err := json.Unmarshal(data, &ch); err != nil {
			return nil, malformed(err)
		}
		if ch.Error != nil {
			return nil, &agent.ModelError{Code: agent.CodeServer, Message: "the server failed mid-stream: " + ch.Error.Message}
		}
		if err := a.add(&ch); err != nil {
			return nil, err
		}
	}
	if a.finish == "" || !done {
		return nil, &agent.ModelError{Code: agent.CodeStreamClosed, Message: "the response stream ended before it was complete (no finish reason or [DONE])"}
	}
	return a.response()
}

func malformed(err error) error {
	return &agent.ModelError{Code: agent.CodeMalformed, Message: "the server sent malformed data: " + err.Error(), Err: err}
}

// mapError turns a client failure into an *agent.ModelError with a message
// that says what to do; cancellation by the caller stays a context error.
func (m *Model) mapError(parent, callCtx context.Context, err error) error {
	if parent.Err() != nil {
		return context.Cause(parent)
	}
	if callCtx.Err() != nil {
		return &agent.ModelError{Code: agent.CodeTimeout, Message: fmt.Sprintf("no complete answer within %s", m.cfg.Timeout), Err: err}
	}
	var me *agent.ModelError
	if errors.As(err, &me) {
		return me
	}
	var se *statusError
	if !errors.As(err, &se) {
		return &agent.ModelError{Code: agent.CodeTransport, Message: "cannot reach " + m.cfg.BaseURL + ": " + err.Error(), Err: err}
	}
	detail := se.Message
	if detail == "" {
		detail = http.StatusText(se.Status)
	}
	e := &agent.ModelError{Status: se.Status, RequestID: se.RequestID, Err: err}
	retried := ""
	if se.Retries > 0 {
		retried = fmt.Sprintf(" after %d retries", se.Retries)
	}
	switch s := se.Status; {
	case s == http.StatusBadRequest && contextTooLong(detail, se.Code):
		e.Code, e.Message = agent.CodeContextExceeded, "the conversation is longer than the model's context window: "+detail
	case s == http.StatusBadRequest:
		e.Code, e.Message = agent.CodeInvalidRequest, "the request was rejected: "+detail
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		e.Code, e.Message = agent.CodeAuth, "authentication failed, check DEEPSEEK_API_KEY: "+detail
	case s == http.StatusPaymentRequired:
		e.Code, e.Message = agent.CodeQuota, "insufficient balance, top up the DeepSeek account: "+detail
	case s == http.StatusTooManyRequests:
		e.Code, e.Message = agent.CodeRateLimit, "rate limited"+retried+", try again later: "+detail
	case s >= 500:
		e.Code, e.Message = agent.CodeServer, "the server failed"+retried+": "+detail
	default:
		e.Code, e.Message = agent.CodeHTTP, detail
	}
	return e
}

// contextTooLong recognises the context-window refusal by its words:
// DeepSeek says "maximum context length" in the message, OpenAI-style
// gateways send the code context_length_exceeded.
func contextTooLong(message, code string) bool {
	return strings.Contains(strings.ReplaceAll(strings.ToLower(message+" "+code), "_", " "), "context length")
}
