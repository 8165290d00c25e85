// Package mcpserver serves the tool registry over the Model Context Protocol.
//
// Every registered tool, the filesystem tools and any other plugin's, is an
// MCP tool with the same name, description and input schema (the
// Definition's Parameters, byte for byte), with annotations from its Traits.
// A call runs through Registry.Execute, so validation, permission plugins
// and the read-before-write policy apply exactly as they do for an agent.
// Tools registered or removed while clients are connected are announced with
// notifications/tools/list_changed. The assembled system prompt is the MCP
// prompt named "system".
//
// Each MCP session is one policy session: what a client has read is what it
// may edit, and another client's reads grant it nothing. The policy session
// ends when the MCP session closes.
//
// The plugin provides the "mcp" service; the host runs its SDK server on a
// transport (stdio, streamable HTTP). It emits what only it knows of (a
// session opened or closed, a 401, a limit's refusal) as the events of
// package mcpevents, which plugins/metrics counts. docs/mcp.md has the
// details.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/internal/buildinfo"
	"github.com/gordis-run/gordis/plugins/mcpserver/mcpevents"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// Service is the "mcp" service: the server over the registry.
var Service = runtime.NewService[*Server]("mcp")

// PromptName is the name of the MCP prompt that carries the system prompt.
const PromptName = "system"

// Config of the plugin.
type Config struct {
	// Cwd is the working directory of every session: relative paths in tool
	// arguments resolve against it. "" leaves them to the filesystem
	// provider's own directory.
	Cwd string `json:"cwd,omitempty"`
	// MaxCallsPerSession bounds the tool calls one session runs at once; a
	// call over it is refused with a JSON-RPC error (CodeOverLimit). 0: no
	// bound.
	MaxCallsPerSession int `json:"maxCallsPerSession,omitempty"`
	// CallsPerSecond bounds the tool calls started per second with one
	// bearer token, in bursts of up to a second's worth; all clients without
	// a token share one budget. A call over it is refused with a JSON-RPC
	// error (CodeOverLimit). 0: no bound.
	CallsPerSecond float64 `json:"callsPerSecond,omitempty"`
}

// Plugin provides the "mcp" service. It injects the "tools" and "prompt"
// services; disposing it closes every MCP session.
var Plugin = runtime.Configured("mcpserver", func(ctx *runtime.Context, cfg Config) error {
	tools, err := registry.Tools.Get(ctx)
	if err != nil {
		return err
	}
	prompt, err := registry.Prompts.Get(ctx)
	if err != nil {
		return err
	}
	s, err := New(ctx, tools, prompt, cfg)
	if err != nil {
		return err
	}
	return Service.Provide(ctx, s)
}, runtime.Inject(registry.Tools, registry.Prompts))

// Server is an MCP server that mirrors a registry. It is safe for
// concurrent use.
type Server struct {
	sdk    *mcp.Server
	rt     *runtime.Context // emits the mcpevents
	tools  *registry.Registry
	logger *slog.Logger
	cwd    string
	calls  atomic.Uint64 // numbers the registry calls

	maxCalls int        // Config.MaxCallsPerSession
	rates    rates      // Config.CallsPerSecond
	diverted diversions // large arguments on their way around the SDK
	drain    drain      // the HTTP endpoints' requests in flight

	// cut ends with a drain out of time, and with it every call's context.
	cut    context.Context
	cutAll context.CancelCauseFunc

	publishing sync.Mutex // serializes sync and guards published
	published  map[string]registry.Definition

	mu       sync.Mutex // guards sessions and closed
	sessions map[*mcp.ServerSession]*session
	closed   bool
	watchers sync.WaitGroup // one per session in sessions
}

// New builds the server on ctx: it publishes the registry's tools and
// follows its changes until ctx's fiber is disposed, which closes every
// session. Hosts that do not load Plugin use it directly.
func New(ctx *runtime.Context, tools *registry.Registry, prompt *registry.Prompt, cfg Config) (*Server, error) {
	logger := ctx.Logger()
	s := &Server{
		sdk: mcp.NewServer(&mcp.Implementation{Name: "gordis", Version: buildinfo.Version()}, &mcp.ServerOptions{
			Logger: logger,
			// Announced even while the registry is empty, so that clients
			// listen for the tools that arrive later.
			Capabilities: &mcp.ServerCapabilities{
				Tools:   &mcp.ToolCapabilities{ListChanged: true},
				Prompts: &mcp.PromptCapabilities{ListChanged: true},
			},
		}),
		rt:        ctx,
		tools:     tools,
		logger:    logger,
		cwd:       cfg.Cwd,
		published: map[string]registry.Definition{},
		sessions:  map[*mcp.ServerSession]*session{},
		maxCalls:  cfg.MaxCallsPerSession,
		rates:     rates{perSecond: cfg.CallsPerSecond, now: time.Now, buckets: map[string]*bucket{}},
		diverted:  diversions{held: map[string]json.RawMessage{}},
	}
	s.cut, s.cutAll = context.WithCancelCause(context.Background())
	s.sdk.AddReceivingMiddleware(s.openOnInitialize)
	s.sdk.AddPrompt(&mcp.Prompt{
		Name:        PromptName,
		Description: "The system prompt of the gordis tools: how to use them well.",
	}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{
			Description: "gordis system prompt",
			Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt.Assemble()}}},
		}, nil
	})
	// The teardown is registered first so that it runs last, after the
	// listener is gone: no sync can race it.
	if _, err := ctx.Effect(func() (func() error, error) { return s.close, nil }); err != nil {
		return nil, err
	}
	if _, err := registry.ChangedEvent.On(ctx, func(registry.Change) error { s.sync(); return nil }); err != nil {
		return nil, err
	}
	s.sync()
	return s, nil
}

// MCP returns the SDK server, to run on a transport:
// s.MCP().Run(ctx, NewIOTransport(os.Stdin, os.Stdout)) or
// mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.MCP() }, nil).
// A stateless HTTP handler would make every request its own session, and
// so defeat read-before-write: keep sessions.
func (s *Server) MCP() *mcp.Server { return s.sdk }

// sync publishes the registry's current tools: it adds what is new or
// changed and removes what is gone. Reconciling the whole list, rather than
// applying one change, makes the order of concurrent changes irrelevant.
func (s *Server) sync() {
	s.publishing.Lock()
	defer s.publishing.Unlock()
	if s.isClosed() {
		return
	}
	defs := s.tools.Definitions()
	current := make(map[string]bool, len(defs))
	for _, def := range defs {
		current[def.Name] = true
		if old, ok := s.published[def.Name]; ok && sameDefinition(old, def) {
			continue
		}
		tool, err := toolOf(def)
		if err != nil {
			s.logger.Warn("mcp: tool not served", "tool", def.Name, "err", err)
			s.unpublish(def.Name)
			continue
		}
		s.sdk.AddTool(tool, s.handler(def.Name))
		s.published[def.Name] = def
	}
	for name := range s.published {
		if !current[name] {
			s.unpublish(name)
		}
	}
}

func (s *Server) unpublish(name string) {
	if _, ok := s.published[name]; ok {
		s.sdk.RemoveTools(name)
		delete(s.published, name)
	}
}

func sameDefinition(a, b registry.Definition) bool {
	return a.Description == b.Description && string(a.Parameters) == string(b.Parameters) &&
		a.Traits.ReadOnly == b.Traits.ReadOnly && a.Traits.Destructive == b.Traits.Destructive
}

// toolOf is the MCP form of a definition. MCP requires an object schema at
// the top; a tool whose schema says otherwise is not served.
func toolOf(def registry.Definition) (*mcp.Tool, error) {
	var top struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(def.Parameters, &top); err != nil || top.Type != "object" {
		return nil, errors.New(`MCP needs an input schema of "type": "object"`)
	}
	return &mcp.Tool{
		Name:        def.Name,
		Description: def.Description,
		InputSchema: def.Parameters,
		Annotations: annotationsOf(def.Traits),
	}, nil
}

// annotationsOf maps Traits to hints. The protocol's defaults assume the
// worst (destructive), and Traits that claim nothing mean the same, so
// destructiveHint is only ever stated as true.
func annotationsOf(t registry.Traits) *mcp.ToolAnnotations {
	a := &mcp.ToolAnnotations{ReadOnlyHint: t.ReadOnly}
	if !t.ReadOnly && t.Destructive {
		destructive := true
		a.DestructiveHint = &destructive
	}
	return a
}

// ErrorContent is the structured content of a failed call: the registry's
// error name and code, for clients that act on failures programmatically.
// A failure without a code has no structured content: there is nothing to
// act on, and an empty object would look like a result.
type ErrorContent struct {
	Name string `json:"name,omitempty"`
	Code string `json:"code,omitempty"`
}

func (s *Server) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := s.diverted.restore(req.Params.Arguments) // first: a refused call frees them too
		session, err := s.session(req.Session)
		if err != nil {
			return nil, err
		}
		id := "mcp-" + strconv.FormatUint(s.calls.Add(1), 10)
		log := s.logger.With("call", id, "session", req.Session.ID(), "tool", name)
		if err := s.rates.allow(userOf(req)); err != nil {
			s.refused(mcpevents.LimitRate)
			log.Debug("mcp: call refused", "user", userOf(req), "err", err)
			return nil, err
		}
		release, err := session.calls.acquire()
		if err != nil {
			s.refused(mcpevents.LimitCalls)
			log.Debug("mcp: call refused", "err", err)
			return nil, err
		}
		defer release()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.cut, cancel)()
		res := s.tools.Execute(ctx, &registry.Call{ID: id, Tool: name, Args: args, Session: session.agent})
		log.Debug("mcp: call", "code", res.Code(), "duration", res.Duration)
		return resultOf(res), nil
	}
}

func resultOf(res *registry.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Text}}, IsError: res.IsError}
	if res.IsError && res.Error != nil && res.Error.Code != "" {
		out.StructuredContent = ErrorContent{Name: res.Error.Name, Code: res.Error.Code}
	}
	return out
}

// errClosed refuses calls that reach a disposed server.
var errClosed = errors.New("mcpserver: the server is shut down")

// session is what the server keeps for an MCP session.
type session struct {
	agent *agent.Session // the policy session
	calls slots          // the calls in flight
}

// session is the state of an MCP session, started when it is initialized
// (or on its first call, should that come first); a watcher ends its policy
// session when the MCP session closes. mcpevents.SessionEvent brackets the
// two, emitted with no lock held.
func (s *Server) session(ss *mcp.ServerSession) (*session, error) {
	if ss == nil {
		return nil, errors.New("mcpserver: a call outside an MCP session")
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errClosed
	}
	if a, ok := s.sessions[ss]; ok {
		s.mu.Unlock()
		return a, nil
	}
	a := &session{agent: agent.NewSession(s.cwd)}
	if s.maxCalls > 0 {
		a.calls = make(slots, s.maxCalls)
	}
	s.sessions[ss] = a
	s.watchers.Add(1)
	s.mu.Unlock()
	s.sessionEvent(mcpevents.Session{ID: ss.ID(), Open: true})
	go func() {
		defer s.watchers.Done()
		_ = ss.Wait() // the reason it closed does not matter here
		s.mu.Lock()
		delete(s.sessions, ss)
		s.mu.Unlock()
		a.agent.Close()
		s.sessionEvent(mcpevents.Session{ID: ss.ID()})
	}()
	return a, nil
}

// openOnInitialize starts a session's state once the client's initialize
// request succeeds, so that it counts as open before its first call.
func (s *Server) openOnInitialize(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && err == nil && method == "initialize" {
			_, _ = s.session(ss) // a closed server refuses the calls to come
		}
		return res, err
	}
}

// The server's events. The runtime logs and reports a listener's failure,
// which changes nothing here.

func (s *Server) sessionEvent(e mcpevents.Session) { _ = mcpevents.SessionEvent.Emit(s.rt, e) }

// refused tells observers that limit refused a request or a call.
func (s *Server) refused(limit mcpevents.Limit) {
	_ = mcpevents.RefusalEvent.Emit(s.rt, mcpevents.Refusal{Limit: limit})
}

func (s *Server) authFailed(remote string) {
	_ = mcpevents.AuthFailureEvent.Emit(s.rt, mcpevents.AuthFailure{Remote: remote})
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// close unpublishes everything, closes every MCP session and waits until
// their policy sessions have ended.
func (s *Server) close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.publishing.Lock()
	names := make([]string, 0, len(s.published))
	for name := range s.published {
		names = append(names, name)
	}
	s.published = map[string]registry.Definition{}
	s.publishing.Unlock()
	s.sdk.RemoveTools(names...)
	s.sdk.RemovePrompts(PromptName)
	var errs []error
	for ss := range s.sdk.Sessions() {
		if err := ss.Close(); err != nil {
			errs = append(errs, fmt.Errorf("mcpserver: closing session %q: %w", ss.ID(), err))
		}
	}
	s.watchers.Wait()
	return errors.Join(errs...)
}
