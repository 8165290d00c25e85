package agent

import (
	"context"
	"fmt"

	"github.com/gordis-run/gordis/registry"
)

// Role is the author of a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of the conversation, in the provider-neutral form the
// loop keeps. The system prompt is not a message: it is rebuilt every step.
type Message struct {
	Role Role   `json:"role"`
	Text string `json:"text,omitempty"`
	// Reasoning is the assistant's thinking text; nil means the provider sent
	// none. It is passed back on messages with tool calls, even when "".
	Reasoning  *string    `json:"reasoning,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`  // assistant only
	ToolCallID string     `json:"toolCallId,omitempty"` // tool only
}

// ToolCall is one function call requested by the model. Arguments is the raw
// JSON text the model produced; it may be invalid.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Finish says why the model stopped producing a message.
type Finish string

const (
	FinishStop      Finish = "stop"
	FinishToolCalls Finish = "tool_calls"
	FinishLength    Finish = "length"
)

// Usage counts tokens. Input excludes the cached part, so the fields are
// disjoint; Reasoning is included in Output.
type Usage struct {
	Input     int64 `json:"input"`
	CacheRead int64 `json:"cacheRead"`
	Output    int64 `json:"output"`
	Reasoning int64 `json:"reasoning"`
}

// Add accumulates u2 into u.
func (u *Usage) Add(u2 Usage) {
	u.Input += u2.Input
	u.CacheRead += u2.CacheRead
	u.Output += u2.Output
	u.Reasoning += u2.Reasoning
}

func (u Usage) String() string {
	return fmt.Sprintf("in=%d cache=%d out=%d", u.Input, u.CacheRead, u.Output)
}

// Request is everything one model call needs.
type Request struct {
	System   string
	Messages []Message
	Tools    []registry.Definition
	// OnDelta, when set, is called by a streaming model with each piece of
	// reasoning or text as it arrives, in order, before Complete returns.
	OnDelta func(Delta)
}

// Delta is a piece of a message being streamed.
type Delta struct {
	Reasoning string `json:"reasoning,omitempty"`
	Text      string `json:"text,omitempty"`
}

// Response is one assembled assistant message.
type Response struct {
	Message Message
	Finish  Finish
	Usage   Usage
}

// Model produces the next assistant message. Implementations return a
// *ModelError for provider failures and the context's error on cancellation.
type Model interface {
	Complete(ctx context.Context, req *Request) (*Response, error)
}

// Stable codes of a ModelError.
const (
	CodeAuth            = "AUTH"
	CodeQuota           = "QUOTA"
	CodeRateLimit       = "RATE_LIMIT"
	CodeServer          = "SERVER"
	CodeInvalidRequest  = "INVALID_REQUEST"
	CodeContextExceeded = "CONTEXT_WINDOW_EXCEEDED"
	CodeHTTP            = "HTTP_ERROR"
	CodeTransport       = "TRANSPORT"
	CodeTimeout         = "TIMEOUT"
	CodeStreamClosed    = "STREAM_CLOSED"
	CodeMalformed       = "MALFORMED_RESPONSE"
	CodeEmptyResponse   = "EMPTY_RESPONSE"
	CodeFinish          = "UNSUPPORTED_FINISH"
)

// ModelError is a failed model call: a stable code, a message meant for the
// user, and the HTTP status when there was one.
type ModelError struct {
	Code      string
	Status    int // 0 when no HTTP response was involved
	Message   string
	RequestID string
	Err       error // cause, if any
}

func (e *ModelError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("model: %s (HTTP %d, %s)", e.Message, e.Status, e.Code)
	}
	return fmt.Sprintf("model: %s (%s)", e.Message, e.Code)
}

func (e *ModelError) Unwrap() error { return e.Err }

// Is matches a *ModelError with the same code and no message, so callers can
// write errors.Is(err, &agent.ModelError{Code: agent.CodeAuth}).
func (e *ModelError) Is(target error) bool {
	t, ok := target.(*ModelError)
	return ok && t.Code == e.Code && t.Message == ""
}
