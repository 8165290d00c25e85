package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/internal/mcptest"
	"github.com/gordis-run/gordis/plugins/mcpserver"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// fixture is a default deployment in a temporary workspace with the server
// plugin loaded.
type fixture struct {
	d      *gordis.Deployment
	fiber  *runtime.Fiber
	server *mcpserver.Server
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	return newFixtureWith(t, mcpserver.Config{})
}

// newFixtureWith is newFixture with cfg; its Cwd is the workspace.
func newFixtureWith(t testing.TB, cfg mcpserver.Config) *fixture {
	t.Helper()
	// The runtime's log goes to a recorder, not stderr: benchmarks print only figures.
	d, cleanup, err := gordis.Build(gordis.Options{Workspace: t.TempDir(), Logger: slog.New(runtimetest.NewLogs())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	cfg.Cwd = d.Workspace
	f := runtimetest.Plug(t, d.Root, mcpserver.Plugin, cfg)
	s, err := mcpserver.Service.Get(f.Context())
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{d: d, fiber: f, server: s}
}

// connect opens an in-memory client session; wire, if not nil, receives
// the JSON-RPC traffic as the client saw it.
func (fx *fixture) connect(t testing.TB, opts *mcp.ClientOptions, wire *mcptest.Buffer) *mcp.ClientSession {
	t.Helper()
	return fx.connectClient(t, mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, opts), wire, nil)
}

func (fx *fixture) connectClient(t testing.TB, client *mcp.Client, wire *mcptest.Buffer, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	serverT, clientT := mcp.NewInMemoryTransports()
	if _, err := fx.server.MCP().Connect(t.Context(), serverT, nil); err != nil {
		t.Fatal(err)
	}
	var transport mcp.Transport = clientT
	if wire != nil {
		transport = &mcp.LoggingTransport{Transport: clientT, Writer: wire}
	}
	cs, err := client.Connect(t.Context(), transport, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func (fx *fixture) file(t testing.TB, name, content string) string {
	t.Helper()
	path := filepath.Join(fx.d.Workspace, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("content has %d blocks, want 1", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// errorCode is the code in a failed result's structured content.
func errorCode(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if !res.IsError {
		t.Fatalf("succeeded: %q", text(t, res))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var ec mcpserver.ErrorContent
	if err := json.Unmarshal(raw, &ec); err != nil {
		t.Fatal(err)
	}
	return ec.Code
}

// TestToolsList checks that each tool is served as the registry defines it:
// the input schema byte for byte as it went over the wire, and the hints.
func TestToolsList(t *testing.T) {
	fx := newFixture(t)
	var wire mcptest.Buffer
	cs := fx.connect(t, nil, &wire)
	listed, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defs := fx.d.Tools.Definitions()
	if len(listed.Tools) != len(defs) {
		t.Fatalf("listed %d tools, want %d", len(listed.Tools), len(defs))
	}
	served := map[string]*mcp.Tool{}
	for _, tool := range listed.Tools {
		served[tool.Name] = tool
	}
	raw := mcptest.InputSchemas(t, wire.String())
	want := map[string]struct {
		readOnly    bool
		destructive *bool
	}{
		"list":  {readOnly: true},
		"read":  {readOnly: true},
		"write": {destructive: ptr(true)},
		"edit":  {destructive: ptr(true)},
		"glob":  {readOnly: true},
		"grep":  {readOnly: true},
	}
	for _, def := range defs {
		got := served[def.Name]
		if got == nil {
			t.Errorf("%s is not served", def.Name)
			continue
		}
		if got.Description != def.Description {
			t.Errorf("%s: description %q, want %q", def.Name, got.Description, def.Description)
		}
		if !bytes.Equal(raw[def.Name], def.Parameters) {
			t.Errorf("%s: inputSchema on the wire\n%s\nwant\n%s", def.Name, raw[def.Name], def.Parameters)
		}
		w := want[def.Name]
		a := got.Annotations
		if a == nil || a.ReadOnlyHint != w.readOnly || (a.DestructiveHint == nil) != (w.destructive == nil) ||
			(a.DestructiveHint != nil && *a.DestructiveHint != *w.destructive) {
			t.Errorf("%s: annotations %+v, want readOnly %v destructive %v", def.Name, a, w.readOnly, w.destructive)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestReadBeforeWrite drives the policy through MCP: an edit needs a read
// in the same MCP session, a changed file makes it stale, and the failures
// carry their code.
func TestReadBeforeWrite(t *testing.T) {
	fx := newFixture(t)
	path := fx.file(t, "notes.md", "status: draft\n")
	a := fx.connect(t, nil, nil)
	b := fx.connect(t, nil, nil)
	edit := map[string]any{"file_path": "notes.md", "old_string": "draft", "new_string": "reviewed"}

	if got := errorCode(t, call(t, a, "edit", edit)); got != "FS_NOT_OBSERVED" {
		t.Fatalf("edit before read: code %q, want FS_NOT_OBSERVED", got)
	}
	read := call(t, a, "read", map[string]any{"file_path": "notes.md"})
	if read.IsError || !strings.Contains(text(t, read), "1: status: draft") {
		t.Fatalf("read: %q", text(t, read))
	}
	// Another MCP session is another policy session: a's read grants b nothing.
	if got := errorCode(t, call(t, b, "edit", edit)); got != "FS_NOT_OBSERVED" {
		t.Fatalf("edit in another session: code %q, want FS_NOT_OBSERVED", got)
	}
	if res := call(t, a, "edit", edit); res.IsError {
		t.Fatalf("edit after read: %q", text(t, res))
	}
	if err := os.WriteFile(path, []byte("status: changed behind the tools\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stale := call(t, a, "edit", map[string]any{"file_path": "notes.md", "old_string": "changed", "new_string": "x"})
	if got := errorCode(t, stale); got != "FS_STALE_VERSION" {
		t.Fatalf("stale edit: code %q, want FS_STALE_VERSION", got)
	}
	if !strings.HasPrefix(text(t, stale), "Error: ") {
		t.Errorf("stale edit text %q does not start with Error: ", text(t, stale))
	}
}

// TestResultsMatchTheRegistry checks that a call's text is the registry's
// result text exactly, success or failure.
func TestResultsMatchTheRegistry(t *testing.T) {
	fx := newFixture(t)
	fx.file(t, "a.txt", "one\ntwo\n")
	cs := fx.connect(t, nil, nil)
	for _, tc := range []struct {
		tool string
		args string
	}{
		{"read", `{"file_path":"a.txt","offset":2}`},
		{"list", `{}`},
		{"read", `{"file_path":"missing.txt"}`},
		{"read", `{"file_path":7}`},
		{"read", `{"file_path":"a.txt","offset":-1}`}, // a failure without a code
	} {
		want := fx.d.Tools.Execute(t.Context(), &registry.Call{Tool: tc.tool, Args: json.RawMessage(tc.args)})
		got := call(t, cs, tc.tool, json.RawMessage(tc.args))
		if text(t, got) != want.Text || got.IsError != want.IsError {
			t.Errorf("%s %s:\n got %v %q\nwant %v %q", tc.tool, tc.args, got.IsError, text(t, got), want.IsError, want.Text)
		}
		switch {
		case want.IsError && want.Error.Code == "":
			// Nothing to act on: no structured content rather than {}.
			if got.StructuredContent != nil {
				t.Errorf("%s %s: structured content %v without a code", tc.tool, tc.args, got.StructuredContent)
			}
		case want.IsError:
			if code := errorCode(t, got); code != want.Error.Code {
				t.Errorf("%s %s: code %q, want %q", tc.tool, tc.args, code, want.Error.Code)
			}
		case got.StructuredContent != nil:
			t.Errorf("%s %s: structured content %v on success", tc.tool, tc.args, got.StructuredContent)
		}
	}
}

// TestListChanged loads and disposes a plugin with a tool while a client is
// connected: the client is told each time and sees the new list.
//
// Clients of the 2026-07-28 protocol get the notification only on a
// subscription that the SDK's client opens without waiting for the
// server's acknowledgement, so the test waits for it.
func TestListChanged(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { testListChanged(t, version) })
	}
}

func testListChanged(t *testing.T, version string) {
	fx := newFixture(t)
	changed := make(chan struct{}, 10)
	acknowledged := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				acknowledged <- struct{}{}
			}
			return next(ctx, method, req)
		}
	})
	cs := fx.connectClient(t, client, nil, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	if version >= "2026-07-28" {
		await(t, acknowledged, "the subscription to be acknowledged")
	}
	count := registry.Tool{
		Name:        "count",
		Description: "Counts.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
		Traits:      registry.Traits{ReadOnly: true},
		Execute:     func(context.Context, *registry.Call) (any, error) { return "1 2 3", nil },
	}
	f, err := fx.d.Root.Plugin(runtime.Func("counter", func(ctx *runtime.Context) error {
		return fx.d.Tools.Register(ctx, count)
	}), nil)
	if err == nil {
		err = f.Wait()
	}
	if err != nil {
		t.Fatal(err)
	}
	await(t, changed, "list_changed after a registration")
	if names := toolNames(t, cs); !strings.Contains(names, "count") {
		t.Fatalf("tools after registration: %s", names)
	}
	if got := text(t, call(t, cs, "count", map[string]any{"n": 3})); got != "1 2 3" {
		t.Errorf("count = %q", got)
	}
	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	await(t, changed, "list_changed after a removal")
	if names := toolNames(t, cs); strings.Contains(names, "count") {
		t.Fatalf("tools after removal: %s", names)
	}
}

func toolNames(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	listed, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range listed.Tools {
		names = append(names, tool.Name)
	}
	return strings.Join(names, " ")
}

func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// TestNonObjectSchemaIsNotServed: MCP needs an object schema, so a tool
// whose schema is something else stays out of the list (and is logged)
// instead of breaking the server.
func TestNonObjectSchemaIsNotServed(t *testing.T) {
	fx := newFixture(t)
	f, err := fx.d.Root.Plugin(runtime.Func("odd", func(ctx *runtime.Context) error {
		return fx.d.Tools.Register(ctx, registry.Tool{
			Name:       "odd",
			Parameters: json.RawMessage(`{"type":"string"}`),
			Execute:    func(context.Context, *registry.Call) (any, error) { return "", nil },
		})
	}), nil)
	if err == nil {
		err = f.Wait()
	}
	if err != nil {
		t.Fatal(err)
	}
	if names := toolNames(t, fx.connect(t, nil, nil)); names != "edit glob grep list read write" {
		t.Errorf("tools = %q, want the six deployed tools (in name order)", names)
	}
}

func TestPrompt(t *testing.T) {
	fx := newFixture(t)
	cs := fx.connect(t, nil, nil)
	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: mcpserver.PromptName})
	if err != nil {
		t.Fatal(err)
	}
	want := fx.d.Prompt.Assemble()
	if want == "" {
		t.Fatal("the deployment assembles an empty prompt")
	}
	if len(res.Messages) != 1 || res.Messages[0].Content.(*mcp.TextContent).Text != want {
		t.Errorf("prompt messages %+v, want one with the assembled prompt", res.Messages)
	}
}

// probe registers a tool that hands its call to the test and, if hold is
// not nil, waits for hold to close (then answers "ok") or for its context to
// end.
func (fx *fixture) probe(t *testing.T, hold <-chan struct{}) (calls <-chan *registry.Call, ended <-chan error) {
	t.Helper()
	callCh := make(chan *registry.Call, 10)
	endCh := make(chan error, 10)
	f, err := fx.d.Root.Plugin(runtime.Func("probe", func(ctx *runtime.Context) error {
		return fx.d.Tools.Register(ctx, registry.Tool{
			Name: "probe",
			Execute: func(ctx context.Context, c *registry.Call) (any, error) {
				callCh <- c
				if hold == nil {
					return "ok", nil
				}
				select {
				case <-hold:
					return "ok", nil
				case <-ctx.Done():
					endCh <- ctx.Err()
					return nil, ctx.Err()
				}
			},
		})
	}), nil)
	if err == nil {
		err = f.Wait()
	}
	if err != nil {
		t.Fatal(err)
	}
	return callCh, endCh
}

func TestClientCancellationCancelsTheCall(t *testing.T) {
	fx := newFixture(t)
	calls, ended := fx.probe(t, make(chan struct{}))
	cs := fx.connect(t, nil, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{}})
		done <- err
	}()
	await(t, calls, "the call to start")
	cancel()
	if err := await(t, ended, "the call's context to end"); !errors.Is(err, context.Canceled) {
		t.Errorf("the call's context ended with %v, want context.Canceled", err)
	}
	if err := await(t, done, "CallTool to return"); !errors.Is(err, context.Canceled) {
		t.Errorf("CallTool returned %v, want context.Canceled", err)
	}
}

// TestSessionLifetime: calls of one MCP session share one policy session,
// with the configured cwd, which ends when the client closes.
func TestSessionLifetime(t *testing.T) {
	fx := newFixture(t)
	calls, _ := fx.probe(t, nil)
	cs := fx.connect(t, nil, nil)
	call(t, cs, "probe", map[string]any{})
	first := await(t, calls, "the first call").Session
	call(t, cs, "probe", map[string]any{})
	if second := await(t, calls, "the second call").Session; second != first {
		t.Fatal("two calls of one MCP session ran in different policy sessions")
	}
	if first.Cwd() != fx.d.Workspace {
		t.Errorf("session cwd %q, want %q", first.Cwd(), fx.d.Workspace)
	}
	select {
	case <-first.Done():
		t.Fatal("the policy session ended while the MCP session is open")
	default:
	}
	cs.Close()
	await(t, first.Done(), "the policy session to end")
}

// TestDisposeClosesSessions: disposing the plugin ends every MCP session
// and its policy session.
func TestDisposeClosesSessions(t *testing.T) {
	fx := newFixture(t)
	calls, _ := fx.probe(t, nil)
	cs := fx.connect(t, nil, nil)
	call(t, cs, "probe", map[string]any{})
	session := await(t, calls, "the call").Session
	if err := fx.fiber.Dispose(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-session.Done():
	default:
		t.Fatal("the policy session outlived the disposed server")
	}
	waited := make(chan error, 1)
	go func() { waited <- cs.Wait() }()
	await(t, waited, "the client session to close")
}

// TestStreamableHTTP: over HTTP, an MCP session (Mcp-Session-Id) is a
// policy session too, so a read and then an edit succeed, and closing the
// client (DELETE) ends it.
func TestStreamableHTTP(t *testing.T) {
	fx := newFixture(t)
	fx.file(t, "notes.md", "status: draft\n")
	calls, _ := fx.probe(t, nil)
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fx.server.MCP() }, nil))
	t.Cleanup(srv.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() }) // idempotent: the test closes it too
	if res := call(t, cs, "read", map[string]any{"file_path": "notes.md"}); res.IsError {
		t.Fatalf("read: %q", text(t, res))
	}
	if res := call(t, cs, "edit", map[string]any{"file_path": "notes.md", "old_string": "draft", "new_string": "reviewed"}); res.IsError {
		t.Fatalf("edit after read over HTTP: %q", text(t, res))
	}
	call(t, cs, "probe", map[string]any{})
	session := await(t, calls, "the probe call").Session
	cs.Close()
	await(t, session.Done(), "the policy session to end with the HTTP session")
}

// TestConcurrentChanges loads and disposes plugins from many goroutines
// while a client is connected: the served list ends equal to the registry's.
func TestConcurrentChanges(t *testing.T) {
	fx := newFixture(t)
	cs := fx.connect(t, nil, nil)
	var wg sync.WaitGroup
	kept := make([]string, 0, 8)
	for i := range 16 {
		name := "tool" + strconv.Itoa(i)
		if i%2 == 0 {
			kept = append(kept, name)
		}
		wg.Go(func() {
			f, err := fx.d.Root.Plugin(runtime.Func(name, func(ctx *runtime.Context) error {
				return fx.d.Tools.Register(ctx, registry.Tool{
					Name:    name,
					Execute: func(context.Context, *registry.Call) (any, error) { return name, nil },
				})
			}), nil)
			if err == nil {
				err = f.Wait()
			}
			if err == nil && i%2 == 1 {
				err = f.Dispose()
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	want := append([]string{"edit", "glob", "grep", "list", "read", "write"}, kept...)
	slices.Sort(want)
	if got := toolNames(t, cs); got != strings.Join(want, " ") {
		t.Errorf("served %q, want %q", got, strings.Join(want, " "))
	}
}
