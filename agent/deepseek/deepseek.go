// Package deepseek is the agent.Model for DeepSeek's OpenAI-compatible chat
// API, on the official openai-go client. The client is used for request
// typing, SSE decoding, errors and HTTP-level retries only: the stream is
// assembled by our own accumulator, and assistant history is built by hand
// so reasoning_content is passed back as thinking mode requires.
package deepseek

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/registry"
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
	// MaxRetryDelay caps the backoff and the Retry-After the client will
	// wait for (0: the client's default, 2 minutes for Retry-After).
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
	cfg         Config
	completions openai.ChatCompletionService
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
	// The service is built directly, not through openai.NewClient, whose
	// defaults read OPENAI_* variables (base URL, key, organization, project,
	// custom headers): none of that may reach DeepSeek.
	opts := []option.RequestOption{
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(cfg.APIKey),
		option.WithHeaderDel("OpenAI-Organization"),
		option.WithHeaderDel("OpenAI-Project"),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	if cfg.MaxRetryDelay > 0 {
		opts = append(opts, option.WithMaxRetryDelay(cfg.MaxRetryDelay))
	}
	return &Model{cfg: cfg, completions: openai.NewChatCompletionService(opts...)}, nil
}

// Name returns the model name sent with each request.
func (m *Model) Name() string { return m.cfg.Model }

// Complete sends one request and assembles the reply.
func (m *Model) Complete(ctx context.Context, req *agent.Request) (*agent.Response, error) {
	callCtx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	params := openai.ChatCompletionNewParams{
		Model:    shared.ChatModel(m.cfg.Model),
		Messages: messages(req),
		Tools:    tools(req.Tools),
	}
	var resp *agent.Response
	var err error
	if m.cfg.NoStream {
		resp, err = m.whole(callCtx, params)
	} else {
		resp, err = m.stream(callCtx, params, req.OnDelta)
	}
	if err != nil {
		return nil, m.mapError(ctx, callCtx, err)
	}
	return resp, nil
}

func (m *Model) whole(ctx context.Context, params openai.ChatCompletionNewParams) (*agent.Response, error) {
	c, err := m.completions.New(ctx, params)
	if err != nil {
		return nil, err
	}
	if len(c.Choices) == 0 {
		return nil, &agent.ModelError{Code: agent.CodeMalformed, Message: "the completion has no choices"}
	}
	ch := c.Choices[0]
	var a accumulator
	a.text.WriteString(ch.Message.Content)
	if r, ok := extraString(ch.Message.JSON.ExtraFields, "reasoning_content"); ok {
		a.reasoning.WriteString(r)
		a.sawReasoning = true
	}
	for _, tc := range ch.Message.ToolCalls {
		a.calls = append(a.calls, &partialCall{id: tc.ID, name: tc.Function.Name})
		a.calls[len(a.calls)-1].args.WriteString(tc.Function.Arguments)
	}
	a.finish = ch.FinishReason
	if c.JSON.Usage.Valid() {
		a.usage = &c.Usage
	}
	return a.response()
}

func (m *Model) stream(ctx context.Context, params openai.ChatCompletionNewParams, onDelta func(agent.Delta)) (*agent.Response, error) {
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	var done doneWatcher
	s := m.completions.NewStreaming(ctx, params, option.WithMiddleware(done.middleware))
	defer s.Close()
	a := accumulator{onDelta: onDelta}
	for s.Next() {
		if err := a.add(s.Current()); err != nil {
			return nil, err
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if a.finish == "" || !done.seen() {
		return nil, &agent.ModelError{Code: agent.CodeStreamClosed, Message: "the response stream ended before it was complete (no finish reason or [DONE])"}
	}
	return a.response()
}

// messages serialises the conversation. Assistant messages are built by
// hand: content is always a string (some gateways reject null), and a
// message with tool calls always carries reasoning_content, even "" —
// DeepSeek's thinking mode answers 400 without it.
func messages(req *agent.Request) []openai.ChatCompletionMessageParamUnion {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.System != "" {
		out = append(out, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		switch m.Role {
		case agent.RoleUser:
			out = append(out, openai.UserMessage(m.Text))
		case agent.RoleTool:
			out = append(out, openai.ToolMessage(m.Text, m.ToolCallID))
		case agent.RoleAssistant:
			var a openai.ChatCompletionAssistantMessageParam
			a.Content.OfString = openai.String(m.Text)
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
					},
				})
			}
			if len(m.ToolCalls) > 0 {
				reasoning := ""
				if m.Reasoning != nil {
					reasoning = *m.Reasoning
				}
				a.SetExtraFields(map[string]any{"reasoning_content": reasoning})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	return out
}

// tools declares the registry's definitions as function tools, each one's
// {name, description, parameters} sent verbatim (schema key order kept).
func tools(defs []registry.Definition) []openai.ChatCompletionToolUnionParam {
	out := make([]openai.ChatCompletionToolUnionParam, len(defs))
	for i, d := range defs {
		out[i] = openai.ChatCompletionToolUnionParam{OfFunction: &openai.ChatCompletionFunctionToolParam{
			Function: param.Override[shared.FunctionDefinitionParam](d),
		}}
	}
	return out
}

// ToolsJSON is the "tools" array of a request, exactly as sent.
func ToolsJSON(defs []registry.Definition) ([]byte, error) {
	return json.Marshal(tools(defs))
}

// mapError turns a client failure into an *agent.ModelError with a message
// that says what to do; cancellation by the caller stays a context error.
func (m *Model) mapError(parent, callCtx context.Context, err error) error {
	if parent.Err() != nil {
		return context.Cause(parent)
	}
	var me *agent.ModelError
	if errors.As(err, &me) {
		return me
	}
	if callCtx.Err() != nil {
		return &agent.ModelError{Code: agent.CodeTimeout, Message: fmt.Sprintf("no complete answer within %s", m.cfg.Timeout), Err: err}
	}
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return &agent.ModelError{Code: agent.CodeMalformed, Message: "the server sent malformed data: " + err.Error(), Err: err}
		}
		return &agent.ModelError{Code: agent.CodeTransport, Message: "cannot reach " + m.cfg.BaseURL + ": " + err.Error(), Err: err}
	}
	detail := apiErr.Message
	if detail == "" {
		detail = http.StatusText(apiErr.StatusCode)
	}
	e := &agent.ModelError{Status: apiErr.StatusCode, Err: err}
	if apiErr.Response != nil {
		e.RequestID = cmp.Or(apiErr.Response.Header.Get("x-request-id"), apiErr.Response.Header.Get("x-deepseek-request-id"))
	}
	retried := ""
	if m.cfg.MaxRetries > 0 {
		retried = fmt.Sprintf(" after %d retries", m.cfg.MaxRetries)
	}
	switch s := apiErr.StatusCode; {
	case s == http.StatusBadRequest && strings.Contains(strings.ToLower(detail+apiErr.Code), "context length"):
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
