// Package registry owns tool definitions and runs tool calls safely: it
// validates arguments, consults permission plugins, executes, renders, and
// maps failures to results a model can act on. It also assembles the system
// prompt from sections contributed by plugins.
//
// API CONTRACT STUB: the registry implementer owns this package and keeps the
// exported names below (bodies are placeholders).
package registry

import (
	"context"
	"encoding/json"

	"github.com/gordis-run/gordis/runtime"
)

// Services.
var (
	Tools   = runtime.NewService[*Registry]("tools")
	Prompts = runtime.NewService[*Prompt]("prompt")
)

// Config of the registry plugin.
type Config struct {
	// MaxParallel caps concurrency-safe calls running at once in a batch.
	MaxParallel int `json:"maxParallel,omitempty" jsonschema:"minimum=1,default=10"`
}

// Plugin provides the "tools" and "prompt" services.
var Plugin runtime.Plugin // = runtime.Configured("registry", ...)

// Session is what a call knows about the agent session it runs in. The
// session value's identity is the policy owner.
type Session interface {
	ID() string
	Cwd() string
	// Done is closed when the session ends; state keyed by it can be dropped.
	Done() <-chan struct{}
}

// Call is the execution record of one tool call; tools receive it and pass it
// as the opaque actor of fs events.
type Call struct {
	ID      string
	Tool    string
	Args    json.RawMessage
	Session Session // nil outside an agent
}

// Tool is a tool definition.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema document of the arguments.
	Parameters json.RawMessage
	// ConcurrencySafe reports whether a call may run in parallel; nil = exclusive.
	ConcurrencySafe func(args json.RawMessage) bool
	// Execute runs the call and returns the tool's canonical value.
	Execute func(ctx context.Context, call *Call) (any, error)
	// Render turns the canonical value into model-facing text.
	Render func(value any) string
}

// Define builds a typed tool: arguments decode into A after schema
// validation; the value V renders with render.
func Define[A, V any](name, description string, run func(ctx context.Context, call *Call, args A) (V, error), render func(V) string) (Tool, error) {
	panic("unimplemented")
}

// Definition is what a model request carries for one tool.
type Definition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ErrorInfo is the structured error of a failed call.
type ErrorInfo struct {
	Message string `json:"message"`
	Name    string `json:"name,omitempty"`
	Code    string `json:"code,omitempty"`
}

// Result is the outcome of one call; exactly one per call.
type Result struct {
	CallID  string
	Tool    string
	Text    string // "Error: <message>" when IsError
	IsError bool
	Value   any        // canonical value on success
	Error   *ErrorInfo // on failure
}

// Decision is what a tools/pre-execute listener returns: Deny with a reason,
// or the zero value to allow.
type Decision struct {
	Deny   bool
	Reason string
}

var (
	// PreExecute lets permission plugins allow or deny a call (waterfall).
	PreExecute = runtime.NewWaterfall[*Call, Decision]("tools/pre-execute")
	// ResultEvent fires after every call (emit).
	ResultEvent = runtime.NewEvent[*Result]("tools/result")
)

// Registry is the "tools" service.
type Registry struct{ _ [0]func() }

// Register adds t, owned by ctx's fiber (removed when it is disposed).
func (r *Registry) Register(ctx *runtime.Context, t Tool) error { panic("unimplemented") }

// Definitions lists the tools in registration order.
func (r *Registry) Definitions() []Definition { panic("unimplemented") }

// Execute runs one call through the whole pipeline; it never panics.
func (r *Registry) Execute(ctx context.Context, call *Call) *Result { panic("unimplemented") }

// ExecuteBatch runs one assistant message's calls: concurrency-safe calls in
// parallel (capped), exclusive ones alone; results in input order, exactly one
// per call even when ctx is cancelled.
func (r *Registry) ExecuteBatch(ctx context.Context, calls []*Call) []*Result { panic("unimplemented") }

// Section is a named, ordered part of the system prompt.
type Section struct {
	Name  string
	Order int
	Text  string
}

// Prompt is the "prompt" service.
type Prompt struct{ _ [0]func() }

// Add contributes s, owned by ctx's fiber.
func (p *Prompt) Add(ctx *runtime.Context, s Section) error { panic("unimplemented") }

// Assemble joins the sections by order (then name) into the system prompt.
func (p *Prompt) Assemble() string { panic("unimplemented") }
