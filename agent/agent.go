// Package agent runs the agent loop: a turn is one user prompt and the steps
// it causes; a step is one model request whose tool calls then run as one
// batch through the tool registry. Models plug in through the Model
// interface (see the deepseek and scripted subpackages).
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// DefaultMaxSteps bounds a turn. Upstream has no built-in budget; a demo loop
// without one can spin forever on a confused model.
const DefaultMaxSteps = 16

// NoOutput stands in for an empty tool result, as upstream sends it.
const NoOutput = "(no output)"

// Config wires an agent.
type Config struct {
	Model  Model
	Tools  *registry.Registry
	Prompt *registry.Prompt
	// Cwd is the session's working directory: relative tool paths resolve
	// against it.
	Cwd string
	// MaxSteps bounds the steps of one turn (DefaultMaxSteps when 0).
	MaxSteps int
}

// Agent is one conversation. Turns run one at a time.
type Agent struct {
	rt       *runtime.Context
	model    Model
	tools    *registry.Registry
	prompt   *registry.Prompt
	session  *Session
	maxSteps int

	turnMu sync.Mutex // serialises turns; held while events and tools run

	mu      sync.Mutex // guards history; held only to touch it, never around user code
	history []Message  // appended only by the running turn
	turns   int        // guarded by turnMu
}

// New returns an agent whose events are emitted on rt.
func New(rt *runtime.Context, cfg Config) (*Agent, error) {
	if rt == nil || cfg.Model == nil || cfg.Tools == nil || cfg.Prompt == nil {
		return nil, errors.New("agent: runtime, model, tools and prompt are required")
	}
	if cfg.MaxSteps < 0 {
		return nil, errors.New("agent: MaxSteps must not be negative")
	}
	if cfg.MaxSteps == 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	return &Agent{
		rt:       rt,
		model:    cfg.Model,
		tools:    cfg.Tools,
		prompt:   cfg.Prompt,
		session:  NewSession(cfg.Cwd),
		maxSteps: cfg.MaxSteps,
	}, nil
}

// Session returns the agent's session.
func (a *Agent) Session() *Session { return a.session }

// Close ends the session.
func (a *Agent) Close() { a.session.Close() }

// History returns a copy of the conversation so far.
func (a *Agent) History() []Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Message(nil), a.history...)
}

// Run plays one turn for prompt and returns how it ended. The error is
// non-nil when the turn ended with ReasonError or ReasonAborted; it is
// TurnEnd.Err. Cancelling ctx aborts the turn: a running model call stops,
// tool calls already started finish, and the rest get the registry's
// before-dispatch results, so the history stays well formed.
//
// Turns run one at a time: Run waits for the running turn, so the agent's
// own event listeners must not call it.
func (a *Agent) Run(ctx context.Context, prompt string) (TurnEnd, error) {
	a.turnMu.Lock()
	defer a.turnMu.Unlock()
	a.turns++
	t := turn{Agent: a, ctx: ctx, end: TurnEnd{Session: a.session.ID(), Turn: a.turns}}
	_ = TurnStartEvent.Emit(a.rt, TurnStart{Session: t.end.Session, Turn: t.end.Turn, Prompt: prompt})
	a.record(Message{Role: RoleUser, Text: prompt})
	t.play()
	end := t.end
	if end.Err != nil {
		end.Error = end.Err.Error()
	}
	_ = TurnEndEvent.Emit(a.rt, end)
	return end, end.Err
}

// record appends to the history.
func (a *Agent) record(msgs ...Message) {
	a.mu.Lock()
	a.history = append(a.history, msgs...)
	a.mu.Unlock()
}

// turn is the state of one Run.
type turn struct {
	*Agent
	ctx  context.Context
	end  TurnEnd
	step int
}

func (t *turn) play() {
	for t.step = 1; ; t.step++ {
		t.end.Steps = t.step
		more, err := t.runStep()
		switch {
		case err != nil:
			t.fail(err)
			return
		case t.end.Reason != "":
			return
		case !more:
			t.end.Reason = ReasonCompleted
			return
		case t.ctx.Err() != nil:
			t.fail(context.Cause(t.ctx))
			return
		case t.step >= t.maxSteps:
			t.end.Reason = ReasonMaxSteps
			return
		}
	}
}

// runStep requests one assistant message and runs its tool calls; more says
// whether the model asked for tools (and so wants another step).
func (t *turn) runStep() (more bool, err error) {
	if err := context.Cause(t.ctx); err != nil {
		return false, err
	}
	where := StepStart{Session: t.end.Session, Turn: t.end.Turn, Step: t.step}
	_ = StepStartEvent.Emit(t.rt, where)
	// Only this turn appends to the history, so reading it needs no lock;
	// the capped slice keeps a model from appending into it.
	resp, err := t.model.Complete(t.ctx, &Request{
		System:   t.prompt.Assemble(),
		Messages: t.history[:len(t.history):len(t.history)],
		Tools:    t.tools.Definitions(),
		OnDelta: func(d Delta) {
			_ = AssistantDeltaEvent.Emit(t.rt, AssistantDelta{Session: where.Session, Turn: where.Turn, Step: where.Step, Delta: d})
		},
	})
	if err != nil {
		return false, err
	}
	t.end.Usage.Add(resp.Usage)
	msg := resp.Message
	msg.Role = RoleAssistant
	if resp.Finish == FinishLength {
		// A cut message's tool calls may be cut too: never run them.
		msg.ToolCalls = nil
		t.end.Reason = ReasonMaxTokens
	}
	if msg.Text != "" || len(msg.ToolCalls) > 0 {
		// An assistant message with neither is invalid in any later request.
		t.record(msg)
	}
	t.end.Answer = msg.Text
	_ = AssistantMessageEvent.Emit(t.rt, AssistantMessage{
		Session: where.Session, Turn: where.Turn, Step: where.Step,
		Message: msg, Finish: resp.Finish, Usage: resp.Usage,
	})
	if len(msg.ToolCalls) == 0 {
		return false, nil
	}
	t.runTools(msg.ToolCalls)
	return true, nil
}

// runTools runs one assistant message's calls as one batch and appends their
// results in model order.
func (t *turn) runTools(toolCalls []ToolCall) {
	calls := make([]*registry.Call, len(toolCalls))
	for i, tc := range toolCalls {
		calls[i] = &registry.Call{ID: tc.ID, Tool: tc.Name, Args: callArgs(tc.Arguments), Session: t.session}
		_ = ToolCallEvent.Emit(t.rt, ToolCallStart{Session: t.end.Session, Turn: t.end.Turn, Step: t.step, Call: calls[i]})
	}
	results := t.tools.ExecuteBatch(t.ctx, calls)
	for i, r := range results {
		text := r.Text
		if text == "" {
			text = NoOutput
		}
		t.record(Message{Role: RoleTool, ToolCallID: calls[i].ID, Text: text})
		_ = ToolResultEvent.Emit(t.rt, ToolCallEnd{Session: t.end.Session, Turn: t.end.Turn, Step: t.step, Result: r})
	}
}

func (t *turn) fail(err error) {
	t.end.Err = err
	t.end.Reason = ReasonError
	if t.ctx.Err() != nil {
		t.end.Reason = ReasonAborted
	}
	_ = ErrorEvent.Emit(t.rt, StepError{Session: t.end.Session, Turn: t.end.Turn, Step: t.step, Err: err, Error: err.Error()})
}

// callArgs turns the model's argument text into the call's JSON: empty means
// no arguments, and invalid JSON travels on as a JSON string so the tool's
// own validation answers it (as upstream).
func callArgs(raw string) json.RawMessage {
	if raw == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(raw)) {
		return json.RawMessage(raw)
	}
	s, _ := json.Marshal(raw)
	return s
}
