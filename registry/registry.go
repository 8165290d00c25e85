// Package registry owns tool definitions and runs tool calls safely: it
// validates arguments, consults permission plugins, executes, renders, and
// maps failures to results a model can act on. It also assembles the system
// prompt from sections contributed by plugins.
//
// docs/registry.md describes the pipeline, the error names and codes, and
// the scheduling of a batch.
package registry

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gordis-run/gordis/internal/schema"
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

// defaultMaxParallel applies when a host builds a Config without MaxParallel
// (New bypasses the schema); keep it equal to the tag's default above.
const defaultMaxParallel = 10

// Plugin provides the "tools" and "prompt" services. A new config is taken
// in place (a batch started later reads its MaxParallel), never by a
// restart, which would restart every plugin that injects the services.
var Plugin = runtime.Configured("registry", func(ctx *runtime.Context, cfg Config) error {
	r := New(ctx, cfg)
	if err := ctx.OnUpdate(func(config any) error {
		r.setMaxParallel(config.(Config).MaxParallel)
		return nil
	}); err != nil {
		return err
	}
	if err := Tools.Provide(ctx, r); err != nil {
		return err
	}
	return Prompts.Provide(ctx, NewPrompt())
})

// Session is what a call knows about the agent session it runs in. The
// session value's identity is the policy owner.
type Session interface {
	ID() string
	Cwd() string
	// Done is closed when the session ends; state keyed by it can be dropped.
	Done() <-chan struct{}
}

// Call is the execution record of one tool call; tools receive it and pass it
// as the opaque actor of fs events. The registry sets empty Args to `{}`
// before anything else sees the call.
type Call struct {
	ID      string          `json:"id"`
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args"`
	Session Session         `json:"session,omitempty"` // nil outside an agent
	// HandOverArgs gives the bytes of Args to the registry: the caller
	// neither reads nor writes them again, nor runs the call a second time.
	// A string argument of a Define tool whose JSON form is longer than
	// 64 KiB may then be decoded into those bytes, which the tool's value
	// shares, instead of into a copy: a 64 MiB write holds its content
	// once, not twice. Args is then replaced by a copy in which each such
	// string is cut as internal/clip cuts a quote ("…(N bytes more)"):
	// tools/pre-execute listeners, the tool and whoever reads Args after
	// the call see that copy. A path argument (Traits.Paths) is never cut.
	HandOverArgs bool `json:"-"`

	decoded decoded // set by the registry for a tool built with Define
}

// decoded is a Define tool's arguments as the registry validated and
// decoded them, with the bytes they came from: a body handed other bytes
// (a wrapper that rewrites Args) decodes those instead.
type decoded struct {
	from  []byte
	value any
}

// of returns the value if it was decoded from raw.
func (d decoded) of(raw []byte) any {
	if len(raw) == 0 || len(d.from) != len(raw) || &d.from[0] != &raw[0] {
		return nil
	}
	return d.value
}

// Tool is a tool definition.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema document of the arguments; empty means
	// an object with no declared properties.
	Parameters json.RawMessage
	// ConcurrencySafe reports whether a call may run in parallel; nil = exclusive.
	ConcurrencySafe func(args json.RawMessage) bool
	// Execute runs the call and returns the tool's canonical value.
	Execute func(ctx context.Context, call *Call) (any, error)
	// Render turns the canonical value into model-facing text; nil shows a
	// string as is and anything else as JSON.
	Render func(value any) string
	// Traits say what a call does, for permission plugins and protocol
	// adapters; the zero value claims nothing (a call may change anything).
	Traits Traits

	typed *typedArgs // Define's arguments, reused while Parameters is their schema
}

// typedArgs is what Define knows of a tool's arguments: their compiled
// schema, and the one-pass validation and decoding into the Go type.
type typedArgs struct {
	schema *schema.Schema
	decode decodeFunc
}

// decodeFunc validates and decodes a Define tool's arguments, decoding the
// strings inPlace picks into raw (schema.Decoder.DecodeInPlace; nil picks
// none).
type decodeFunc func(raw []byte, inPlace func(name string, size int) bool) (any, []schema.Span, error)

// Traits describe what a tool's calls do, so that permission plugins and
// protocol adapters (MCP's readOnlyHint and destructiveHint) need not know
// tools by name.
type Traits struct {
	// ReadOnly: a call changes nothing outside the process.
	ReadOnly bool
	// Destructive: a call may overwrite or remove existing data. It is
	// meaningful only when ReadOnly is false.
	Destructive bool
	// Paths names the top-level arguments that hold filesystem paths: a
	// call changes no file but those they name. A mutating tool that names
	// none may change any file, unless it claims NoFiles; a guard cannot
	// tell which, and may refuse it.
	Paths []string
	// NoFiles: a call changes no files, though it may change other things
	// (send a message, call a service). It is meaningful only when ReadOnly
	// is false and Paths is empty.
	NoFiles bool
}

// Definition is what a model request carries for one tool. Traits are not
// sent to a model.
type Definition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Traits      Traits          `json:"-"`
}

// ErrorInfo is the structured error of a failed call.
type ErrorInfo struct {
	Message string `json:"message"`
	Name    string `json:"name,omitempty"`
	Code    string `json:"code,omitempty"`
}

// Result is the outcome of one call; exactly one per call.
type Result struct {
	CallID  string     `json:"callId"`
	Tool    string     `json:"tool"`
	Text    string     `json:"text"` // "Error: <message>" when IsError
	IsError bool       `json:"isError"`
	Value   any        `json:"value,omitempty"` // canonical value on success
	Error   *ErrorInfo `json:"error,omitempty"` // on failure
	// Duration is how long the call took, from tools/start to its result
	// (tools/result listeners excluded). It is left out of the JSON form,
	// which would otherwise differ from run to run.
	Duration time.Duration `json:"-"`

	ctx context.Context // the call's, for tools/result listeners
}

// Code is the call's outcome in one word: "OK", the error's code, or
// "ERROR" for a failure without one.
func (r *Result) Code() string {
	switch {
	case !r.IsError:
		return "OK"
	case r.Error != nil && r.Error.Code != "":
		return r.Error.Code
	}
	return "ERROR"
}

// Context is the context of the call, for tools/result listeners. The
// registry waits for them no longer than it lasts: a listener still running
// when it ends is abandoned (it runs on, unawaited) and logged. A result the
// registry did not produce has context.Background().
func (r *Result) Context() context.Context { return cmp.Or(r.ctx, context.Background()) }

// Request is a call about to run, as tools/pre-execute listeners see it:
// its arguments have been validated against the tool's schema.
type Request struct {
	Call *Call
	// Traits are what the call's tool declares about its calls.
	Traits Traits

	ctx context.Context
}

// Context is the call's context. When it ends the registry stops waiting
// (Await): the call returns "tool call aborted before dispatch" and a
// decision the listener makes later is dropped (the listener itself runs on
// until it returns, so it should watch this context while it waits).
func (r *Request) Context() context.Context { return r.ctx }

// Paths returns the values of the call's path arguments (Traits.Paths), in
// that order; an argument that is absent or not a string is skipped. It
// reads the argument bytes, so a listener that needs them should call it
// once.
func (r *Request) Paths() []string {
	var paths []string
	for _, name := range r.Traits.Paths {
		if p, ok := schema.StringProperty(r.Call.Args, name); ok {
			paths = append(paths, p)
		}
	}
	return paths
}

// Decision is what a tools/pre-execute listener returns: Deny with a reason,
// or the zero value to allow.
type Decision struct {
	Deny   bool
	Reason string
}

var (
	// PreExecute lets permission plugins allow or deny a call (waterfall).
	PreExecute = runtime.NewWaterfall[*Request, Decision]("tools/pre-execute")
	// StartEvent fires as every call starts, before any of its steps
	// (emit). With ResultEvent it brackets the call: observers count the
	// calls in flight.
	StartEvent = runtime.NewEvent[Start]("tools/start")
	// ResultEvent fires after every call (emit).
	ResultEvent = runtime.NewEvent[*Result]("tools/result")
	// ChangedEvent fires after a tool is registered or removed (emit), for
	// adapters that announce the tool list, such as MCP's list_changed.
	ChangedEvent = runtime.NewEvent[Change]("tools/changed")
)

// Start names a call that is starting. It is a copy, not the Call, so that
// an asynchronous observer reads nothing the call changes as it runs.
type Start struct {
	CallID string `json:"callId"`
	Tool   string `json:"tool"`
}

// Change says that the tool named Tool was registered (Added) or removed.
type Change struct {
	Tool  string
	Added bool
}

// emptyParameters is the schema of a tool that declares no Parameters.
var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// Registry is the "tools" service. It is safe for concurrent use.
type Registry struct {
	ctx         *runtime.Context // dispatches pre-execute and result events
	maxParallel atomic.Int64     // read once per batch

	mu      sync.RWMutex
	byKey   map[string]*entry
	order   []*entry        // registration order
	retired map[string]bool // removed and not registered again
}

// entry is one registered tool with its compiled argument schema and, for
// a Define tool whose schema is unchanged, its one-pass decoding.
type entry struct {
	Tool
	args   *schema.Schema
	decode decodeFunc
}

// New returns a registry whose events are dispatched on ctx. Hosts that do
// not load Plugin use it directly.
func New(ctx *runtime.Context, cfg Config) *Registry {
	r := &Registry{
		ctx:     ctx,
		byKey:   map[string]*entry{},
		retired: map[string]bool{},
	}
	r.setMaxParallel(cfg.MaxParallel)
	return r
}

func (r *Registry) setMaxParallel(n int) {
	r.maxParallel.Store(int64(positiveOr(n, defaultMaxParallel)))
}

func positiveOr(n, fallback int) int {
	if n < 1 {
		return fallback
	}
	return n
}

// Register adds t, owned by ctx's fiber (removed when it is disposed).
func (r *Registry) Register(ctx *runtime.Context, t Tool) error {
	if t.Name == "" {
		return errors.New("registry: tool without a name")
	}
	if t.Execute == nil {
		return fmt.Errorf("registry: tool %q has no Execute", t.Name)
	}
	params := t.Parameters
	if len(params) == 0 {
		params = emptyParameters
	}
	e := &entry{Tool: t}
	if t.typed != nil && bytes.Equal(t.typed.schema.JSON(), params) {
		e.args, e.decode = t.typed.schema, t.typed.decode
	} else {
		var err error
		if e.args, err = schema.Compile(params); err != nil {
			return fmt.Errorf("registry: tool %q: parameters: %w", t.Name, err)
		}
	}
	e.Parameters = e.args.JSON()
	_, err := ctx.Effect(func() (func() error, error) {
		if err := r.add(e); err != nil {
			return nil, err
		}
		r.changed(e.Name, true)
		return func() error {
			if r.remove(e) {
				r.changed(e.Name, false)
			}
			return nil
		}, nil
	})
	return err
}

// changed emits ChangedEvent; no lock is held, and a failing listener is
// logged: the registration itself has happened.
func (r *Registry) changed(name string, added bool) {
	if err := ChangedEvent.Emit(r.ctx, Change{Tool: name, Added: added}); err != nil {
		r.ctx.Logger().Warn("tools/changed listener failed", "tool", name, "err", err)
	}
}

func (r *Registry) add(e *entry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byKey[e.Name]; dup {
		return fmt.Errorf("registry: tool %q is already registered", e.Name)
	}
	r.byKey[e.Name] = e
	r.order = append(r.order, e)
	delete(r.retired, e.Name)
	return nil
}

// remove drops e and reports whether it was still registered.
func (r *Registry) remove(e *entry) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byKey[e.Name] != e {
		return false
	}
	delete(r.byKey, e.Name)
	r.retired[e.Name] = true
	if i := slices.Index(r.order, e); i >= 0 {
		r.order = slices.Delete(r.order, i, i+1)
	}
	return true
}

// lookup returns the tool named name, or reports whether one was removed
// and has not come back (yet: its plugin may be restarting). Both are read
// under one lock: a tool registered again between two reads would look
// never registered.
func (r *Registry) lookup(name string) (e *entry, retired bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byKey[name], r.retired[name]
}

// Definitions lists the tools in registration order.
func (r *Registry) Definitions() []Definition {
	r.mu.RLock()
	defer r.mu.RUnlock()
	defs := make([]Definition, len(r.order))
	for i, e := range r.order {
		defs[i] = Definition{Name: e.Name, Description: e.Description, Parameters: e.Parameters, Traits: e.Traits}
	}
	return defs
}
