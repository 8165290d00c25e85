package agent

import (
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// The loop's lifecycle and progress events. They are emitted on the agent's
// runtime context, so synchronous listeners see them in order and
// asynchronous observers (ObserveAll) see them too.
var (
	TurnStartEvent        = runtime.NewEvent[TurnStart]("agent/turn-start")
	StepStartEvent        = runtime.NewEvent[StepStart]("agent/step-start")
	AssistantDeltaEvent   = runtime.NewEvent[AssistantDelta]("agent/assistant-delta")
	AssistantMessageEvent = runtime.NewEvent[AssistantMessage]("agent/assistant-message")
	ToolCallEvent         = runtime.NewEvent[ToolCallStart]("agent/tool-call")
	ToolResultEvent       = runtime.NewEvent[ToolCallEnd]("agent/tool-result")
	TurnEndEvent          = runtime.NewEvent[TurnEnd]("agent/turn-end")
	ErrorEvent            = runtime.NewEvent[StepError]("agent/error")
)

// TurnStart opens a turn: one user prompt and the steps it causes.
type TurnStart struct {
	Session string `json:"session"`
	Turn    int    `json:"turn"`
	Prompt  string `json:"prompt"`
}

// StepStart precedes one model request.
type StepStart struct {
	Session string `json:"session"`
	Turn    int    `json:"turn"`
	Step    int    `json:"step"`
}

// AssistantDelta is a piece of the step's message as the model streams it;
// the pieces of one step add up to its AssistantMessage (unless the step
// fails first).
type AssistantDelta struct {
	Session string `json:"session"`
	Turn    int    `json:"turn"`
	Step    int    `json:"step"`
	Delta
}

// AssistantMessage is the message one step produced, as it entered history
// (tool calls already dropped after a length finish).
type AssistantMessage struct {
	Session string  `json:"session"`
	Turn    int     `json:"turn"`
	Step    int     `json:"step"`
	Message Message `json:"message"`
	Finish  Finish  `json:"finish"`
	Usage   Usage   `json:"usage"`
}

// ToolCallStart announces a call, in model order, before its batch runs.
type ToolCallStart struct {
	Session string         `json:"session"`
	Turn    int            `json:"turn"`
	Step    int            `json:"step"`
	Call    *registry.Call `json:"call"`
}

// ToolCallEnd carries a call's result, in model order, after its batch.
type ToolCallEnd struct {
	Session string           `json:"session"`
	Turn    int              `json:"turn"`
	Step    int              `json:"step"`
	Result  *registry.Result `json:"result"`
}

// Reason says why a turn ended.
type Reason string

const (
	ReasonCompleted Reason = "completed"  // a step had no tool calls
	ReasonMaxSteps  Reason = "max-steps"  // the step budget ran out
	ReasonMaxTokens Reason = "max-tokens" // the model hit its output limit
	ReasonError     Reason = "error"      // a model call failed
	ReasonAborted   Reason = "aborted"    // the turn's context was cancelled
)

// TurnEnd closes every turn, whatever happened.
type TurnEnd struct {
	Session string `json:"session"`
	Turn    int    `json:"turn"`
	Steps   int    `json:"steps"`
	Reason  Reason `json:"reason"`
	// Answer is the text of the last assistant message.
	Answer string `json:"answer,omitempty"`
	Usage  Usage  `json:"usage"`
	Err    error  `json:"-"`
	// Error is Err's text, for traces.
	Error string `json:"error,omitempty"`
}

// StepError reports the failure that ends a turn with ReasonError or
// ReasonAborted.
type StepError struct {
	Session string `json:"session"`
	Turn    int    `json:"turn"`
	Step    int    `json:"step"`
	Err     error  `json:"-"`
	Error   string `json:"error"`
}
