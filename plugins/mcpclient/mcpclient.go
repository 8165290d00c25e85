// Package mcpclient imports the tools of an external MCP server into the
// registry, so that the agent loop and any host use them like their own.
//
// The plugin connects (a stdio command or a streamable HTTP URL), lists the
// server's tools and registers each under a prefix: with prefix "ext_", the
// server's "read" is the registry's "ext_read", with the server's
// description and input schema. A call is forwarded; a remote result with
// isError is a failed result. The tool list follows the server's
// list_changed notifications. A server that goes away is logged, its tools
// stay registered and fail with MCP_UNAVAILABLE, and the plugin reconnects
// with exponential backoff. Disposing the plugin closes the connection and
// removes the tools. docs/mcp.md has the details.
//
// An imported tool's Traits come from the server's hints, and its path
// arguments from Config.Paths: a server does not say which arguments are
// paths, so without a declaration a guard such as examples/protect cannot
// see what a mutating tool touches.
package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis/internal/buildinfo"
	"github.com/gordis-run/gordis/internal/schema"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// Config of the plugin: Prefix and exactly one of Command and URL (neither
// for New).
type Config struct {
	// Prefix is put before each remote tool's name, e.g. "ext_".
	Prefix string `json:"prefix" jsonschema:"minLength=1"`
	// Command starts a server that speaks MCP on its stdin and stdout: the
	// program, then its arguments.
	Command []string `json:"command,omitempty"`
	// URL is the endpoint of a server on the streamable HTTP transport.
	URL string `json:"url,omitempty"`
	// Paths declares, by remote tool name, the top-level arguments that
	// hold filesystem paths (the tool's Traits.Paths), e.g. {"write_file":
	// ["path"]}; an empty list declares that the tool changes no files
	// (Traits.NoFiles). Each name must be a tool the server lists, and each
	// argument a property of type string in its input schema.
	Paths map[string][]string `json:"paths,omitempty"`
}

// Dialer returns a new transport to the server for each connection attempt
// (a transport connects once).
type Dialer func() mcp.Transport

// dialer turns the config into a Dialer; a command's stderr goes to
// logger, line by line.
func (c Config) dialer(logger *slog.Logger) (Dialer, error) {
	switch {
	case len(c.Command) > 0 && c.URL != "":
		return nil, errors.New("mcpclient: set command or url, not both")
	case len(c.Command) > 0:
		return func() mcp.Transport {
			cmd := exec.Command(c.Command[0], c.Command[1:]...)
			cmd.Stderr = &lineLogger{logger: logger.With("prefix", c.Prefix)}
			return &mcp.CommandTransport{Command: cmd}
		}, nil
	case c.URL != "":
		return func() mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: c.URL} }, nil
	}
	return nil, errors.New("mcpclient: set command or url")
}

// Plugin imports the tools of the server in its Config. It injects "tools".
// Apply fails when the first connection does; later losses are retried.
var Plugin = runtime.Configured("mcpclient", func(ctx *runtime.Context, cfg Config) error {
	dial, err := cfg.dialer(ctx.Logger())
	if err != nil {
		return err
	}
	return start(ctx, cfg, dial)
}, runtime.Inject(registry.Tools))

// New is Plugin for a transport the host builds itself (in memory, or an
// HTTP client with authentication); cfg names no Command or URL.
func New(cfg Config, dial Dialer) runtime.Plugin {
	return runtime.Func("mcpclient", func(ctx *runtime.Context) error {
		switch {
		case cfg.Prefix == "":
			return errors.New("mcpclient: empty prefix")
		case len(cfg.Command) > 0 || cfg.URL != "":
			return errors.New("mcpclient: New dials itself; set no command or url")
		}
		return start(ctx, cfg, dial)
	}, runtime.Inject(registry.Tools))
}

// lineLogger logs what a server writes on its stderr, one record per line.
// A line longer than maxLine is logged in pieces of maxLine bytes, so that
// a stream without newlines (a progress bar redrawn with \r) cannot grow
// without bound. exec copies the stream from one goroutine, so it needs no
// lock.
type lineLogger struct {
	logger  *slog.Logger
	partial []byte
}

// maxLine bounds the bytes of one stderr record.
const maxLine = 16 << 10

var _ io.Writer = (*lineLogger)(nil)

func (w *lineLogger) Write(p []byte) (int, error) {
	w.partial = append(w.partial, p...)
	for {
		// A newline past maxLine would not change the piece cut at maxLine,
		// so the records do not depend on how the stream is cut into writes.
		i := bytes.IndexByte(w.partial[:min(len(w.partial), maxLine+1)], '\n')
		switch {
		case i >= 0:
			w.logger.Info("mcp server stderr", "line", string(w.partial[:i]))
			w.partial = w.partial[i+1:]
		case len(w.partial) > maxLine:
			w.logger.Info("mcp server stderr", "line", string(w.partial[:maxLine]))
			w.partial = w.partial[maxLine:]
		default:
			return len(p), nil
		}
	}
}

// Error names and codes of failed forwarded calls.
const (
	// NameRemote names a remote tool's failure that came without its own
	// name and code.
	NameRemote = "MCPToolError"
	CodeRemote = "MCP_TOOL_ERROR"
	// NameUnavailable: the server is not connected, or the connection
	// failed during the call.
	NameUnavailable = "MCPUnavailable"
	CodeUnavailable = "MCP_UNAVAILABLE"
)

// protocolVersion is the version the client asks for. Under 2026-07-28
// list_changed comes only on a subscription that the SDK opens without
// waiting for its acknowledgement, so a change made just after connecting
// could go unseen; before it, the server notifies every session.
const protocolVersion = "2025-11-25"

// Backoff bounds between reconnection attempts, and how long one attempt
// (connecting, initializing, listing the tools) may take.
const (
	minBackoff     = 100 * time.Millisecond
	maxBackoff     = 30 * time.Second
	connectTimeout = 30 * time.Second
)

// client is one plugin application: the connection, its tools, and the
// loop that keeps them.
type client struct {
	ctx     *runtime.Context
	tools   *registry.Registry
	prefix  string
	paths   map[string][]string // Config.Paths
	dial    Dialer
	sdk     *mcp.Client
	schemas *rawSchemas // the input schemas as the server sent them
	logger  *slog.Logger

	mu      sync.Mutex
	session *mcp.ClientSession // nil while down
	down    error              // why, while down

	// remote holds the registered tools by remote name; each is a child
	// fiber, so that one tool can leave without the others. Only the
	// goroutine that connects touches it (apply, then keep), so no lock is
	// held while the registry and its listeners run.
	remote map[string]*importedTool

	resync chan struct{} // list_changed, coalesced
}

type importedTool struct {
	tool  *mcp.Tool
	fiber *runtime.Fiber
}

func start(ctx *runtime.Context, cfg Config, dial Dialer) error {
	tools, err := registry.Tools.Get(ctx)
	if err != nil {
		return err
	}
	c := &client{
		ctx:     ctx,
		tools:   tools,
		prefix:  cfg.Prefix,
		paths:   cfg.Paths,
		dial:    dial,
		logger:  ctx.Logger().With("prefix", cfg.Prefix),
		schemas: newRawSchemas(),
		remote:  map[string]*importedTool{},
		resync:  make(chan struct{}, 1),
	}
	c.sdk = mcp.NewClient(&mcp.Implementation{Name: "gordis", Version: buildinfo.Version()}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{}, // no roots, no sampling
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case c.resync <- struct{}{}:
			default: // one pending resync covers this change too
			}
		},
	})
	life, cancel := context.WithCancel(context.Background())
	first, err := c.connect(life)
	if err != nil {
		cancel()
		return err
	}
	if err := c.declaredToolsListed(); err != nil {
		cancel()
		first.Close()
		return err
	}
	_, err = ctx.Effect(func() (func() error, error) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.keep(life, first)
		}()
		return func() error {
			cancel()
			<-done
			return nil
		}, nil
	})
	if err != nil {
		cancel()
		first.Close()
	}
	return err
}

// connect dials, initializes and imports the tool list.
func (c *client) connect(ctx context.Context) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout) // the session outlives it
	defer cancel()
	cs, err := c.sdk.Connect(ctx, &schemaTap{Transport: c.dial(), schemas: c.schemas}, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		return nil, fmt.Errorf("mcpclient %s: connecting: %w", c.prefix, err)
	}
	// Up before the tools are registered: a call may come as soon as one is.
	c.mu.Lock()
	c.session, c.down = cs, nil
	c.mu.Unlock()
	if err := c.sync(ctx, cs); err != nil {
		c.setDown(err)
		cs.Close()
		return nil, err
	}
	return cs, nil
}

// keep runs until ctx is done: it follows list_changed while connected and
// reconnects with exponential backoff after a loss.
func (c *client) keep(ctx context.Context, cs *mcp.ClientSession) {
	backoff := minBackoff
	for {
		if cs != nil {
			err := c.serve(ctx, cs)
			if ctx.Err() != nil {
				return
			}
			c.logger.Warn("mcp server lost; reconnecting", "err", err)
			backoff = minBackoff
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
		var err error
		if cs, err = c.connect(ctx); err != nil {
			c.setDown(err)
			c.logger.Warn("mcp server unreachable", "err", err, "retry_in", backoff)
		} else {
			c.logger.Info("mcp server reconnected")
		}
	}
}

// serve follows list_changed on cs until it closes or ctx is done, then
// closes it and marks the server down.
func (c *client) serve(ctx context.Context, cs *mcp.ClientSession) error {
	closed := make(chan error, 1)
	go func() { closed <- cs.Wait() }()
	defer cs.Close()
	for {
		select {
		case <-ctx.Done():
			c.setDown(errors.New("the client is closed"))
			return ctx.Err()
		case err := <-closed:
			if err == nil {
				err = errors.New("the server closed the connection")
			}
			c.setDown(err)
			return err
		case <-c.resync:
			if err := c.sync(ctx, cs); err != nil {
				c.logger.Warn("mcp tool list not updated", "err", err)
			}
		}
	}
}

func (c *client) setDown(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.session, c.down = nil, err
}

// sync makes the registered tools match the server's list: new and changed
// tools are registered, vanished ones removed.
func (c *client) sync(ctx context.Context, cs *mcp.ClientSession) error {
	var order []*mcp.Tool // registered in the server's order
	listed := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcpclient %s: listing tools: %w", c.prefix, err)
		}
		order = append(order, tool)
		listed[tool.Name] = tool
	}
	var errs []error
	for name, it := range c.remote {
		if tool, ok := listed[name]; !ok || !sameTool(it.tool, tool) {
			errs = append(errs, it.fiber.Dispose())
			delete(c.remote, name)
		}
	}
	for _, tool := range order {
		if _, ok := c.remote[tool.Name]; ok {
			continue
		}
		f, err := c.register(tool)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.remote[tool.Name] = &importedTool{tool: tool, fiber: f}
	}
	return errors.Join(errs...)
}

func sameTool(a, b *mcp.Tool) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// register adds one remote tool in a child fiber of its own.
func (c *client) register(remote *mcp.Tool) (*runtime.Fiber, error) {
	t, fallback, err := c.toolOf(remote)
	if err != nil {
		return nil, err
	}
	if fallback != nil {
		c.logger.Warn("mcp tool schema not usable for validation; arguments are left to the server",
			"tool", remote.Name, "err", fallback)
	}
	f, err := c.ctx.Plugin(runtime.Func("mcpclient:"+t.Name, func(ctx *runtime.Context) error {
		return c.tools.Register(ctx, t)
	}), nil)
	if err == nil {
		err = f.Wait()
	}
	if err != nil {
		return nil, fmt.Errorf("mcpclient %s: tool %q: %w", c.prefix, remote.Name, err)
	}
	return f, nil
}

// openObject is the schema of a remote tool whose own schema the registry
// cannot compile: any object, for the server to judge.
var openObject = json.RawMessage(`{"type":"object"}`)

// toolOf is the registry form of a remote tool. fallback reports why the
// remote schema was replaced by openObject.
func (c *client) toolOf(remote *mcp.Tool) (t registry.Tool, fallback, err error) {
	params := c.schemas.get(remote.Name)
	if params == nil {
		if params, err = json.Marshal(remote.InputSchema); err != nil {
			return t, nil, fmt.Errorf("mcpclient %s: tool %q: input schema: %w", c.prefix, remote.Name, err)
		}
	}
	// The registry compiles Parameters the same way when it registers t.
	if _, fallback = schema.Compile(params); fallback != nil {
		params = openObject
	}
	a := remote.Annotations
	readOnly := a != nil && a.ReadOnlyHint
	t = registry.Tool{
		Name:        c.prefix + remote.Name,
		Description: remote.Description,
		Parameters:  params,
		Execute:     c.forward(remote.Name),
		Traits: registry.Traits{
			ReadOnly: readOnly,
			// The protocol's default is destructive.
			Destructive: !readOnly && (a == nil || a.DestructiveHint == nil || *a.DestructiveHint),
		},
	}
	if paths, ok := c.paths[remote.Name]; ok {
		if err := stringArguments(params, paths); err != nil {
			return t, nil, fmt.Errorf("mcpclient %s: tool %q: paths: %w", c.prefix, remote.Name, err)
		}
		if len(paths) == 0 {
			t.Traits.NoFiles = true
		} else {
			t.Traits.Paths = paths
		}
	}
	if readOnly {
		t.ConcurrencySafe = func(json.RawMessage) bool { return true }
	}
	return t, fallback, nil
}

// declaredToolsListed checks, once the first listing is imported, that
// Config.Paths names only tools the server has: a misspelt name would leave
// the tool it meant without its paths.
func (c *client) declaredToolsListed() error {
	var unknown []string
	for name := range c.paths {
		if _, ok := c.remote[name]; !ok {
			unknown = append(unknown, strconv.Quote(name))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("mcpclient %s: paths: the server has no tool %s (its tools: %s)",
		c.prefix, strings.Join(unknown, ", "), listing(slices.Sorted(maps.Keys(c.remote))))
}

// stringArguments checks that each name is a property of type string in
// the input schema params: the registry then hands a guard every declared
// path the call carries, since a value of another type fails validation
// before the guard runs.
func stringArguments(params json.RawMessage, names []string) error {
	var doc struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(params, &doc); err != nil {
		return err
	}
	var strs []string
	for name, p := range doc.Properties {
		if p.Type == "string" {
			strs = append(strs, name)
		}
	}
	slices.Sort(strs)
	for _, name := range names {
		if !slices.Contains(strs, name) {
			return fmt.Errorf("%q is not a string argument (its string arguments: %s)", name, listing(strs))
		}
	}
	return nil
}

// listing is names joined for an error text, or "none".
func listing(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// forward is the Execute of an imported tool.
func (c *client) forward(remoteName string) func(context.Context, *registry.Call) (any, error) {
	return func(ctx context.Context, call *registry.Call) (any, error) {
		c.mu.Lock()
		cs, down := c.session, c.down
		c.mu.Unlock()
		if cs == nil {
			return nil, &Error{name: NameUnavailable, code: CodeUnavailable,
				message: fmt.Sprintf("MCP server %q is not connected (%v); reconnecting", c.prefix, down)}
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: remoteName, Arguments: call.Args})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &Error{name: NameUnavailable, code: CodeUnavailable,
				message: fmt.Sprintf("MCP server %q: %v", c.prefix, err), err: err}
		}
		text := textOf(res)
		if res.IsError {
			return nil, remoteError(res, text)
		}
		return text, nil
	}
}

// textOf joins the result's text blocks; other blocks are named, since a
// text-only model cannot use them.
func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, content := range res.Content {
		switch v := content.(type) {
		case *mcp.TextContent:
			parts = append(parts, v.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", v.MIMEType, len(v.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", v.MIMEType, len(v.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s]", v.URI))
		case *mcp.EmbeddedResource:
			if v.Resource != nil && v.Resource.Text != "" {
				parts = append(parts, v.Resource.Text)
			} else if v.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s]", v.Resource.URI))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	return strings.Join(parts, "\n")
}

// remoteError is the failure of a remote result. The registry prefixes
// "Error: " to the message, so a remote text that already starts with it
// loses it here; a gordis server's {name, code} are kept.
func remoteError(res *mcp.CallToolResult, text string) *Error {
	e := &Error{name: NameRemote, code: CodeRemote, message: strings.TrimPrefix(text, "Error: ")}
	var coded struct {
		Name string `json:"name"`
		Code string `json:"code"`
	}
	if b, err := json.Marshal(res.StructuredContent); err == nil && json.Unmarshal(b, &coded) == nil && coded.Code != "" {
		e.name, e.code = coded.Name, coded.Code
	}
	return e
}

// Error is the failure of a forwarded call. The registry reads its Name
// and ErrorCode into the failed result.
type Error struct {
	name, code, message string
	err                 error
}

var _ registry.CodedError = (*Error)(nil)

func (e *Error) Error() string     { return e.message }
func (e *Error) Name() string      { return e.name }
func (e *Error) ErrorCode() string { return e.code }
func (e *Error) Unwrap() error     { return e.err }
