package mcpclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/plugins/mcpclient"
	"github.com/gordis-run/gordis/plugins/mcpserver"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// remote is gordis's own server, the external server of these tests.
type remote struct {
	d      *gordis.Deployment
	server *mcpserver.Server
}

func newRemote(t *testing.T) *remote {
	t.Helper()
	d, cleanup, err := gordis.Build(gordis.Options{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	s, err := mcpserver.New(d.Root, d.Tools, d.Prompt, mcpserver.Config{Cwd: d.Workspace})
	if err != nil {
		t.Fatal(err)
	}
	return &remote{d: d, server: s}
}

// dial connects the remote over a fresh in-memory pair per attempt.
func (r *remote) dial(t *testing.T) mcpclient.Dialer { return inMemory(t, r.server.MCP()) }

func (r *remote) file(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(r.d.Workspace, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// local is a runtime with only a registry: whatever tools it has, the
// client imported.
type local struct {
	root  *runtime.Context
	tools *registry.Registry
}

func newLocal(t *testing.T) *local {
	t.Helper()
	root := runtime.New()
	t.Cleanup(func() { root.Close() })
	f, err := root.Plugin(registry.Plugin, nil)
	if err == nil {
		err = f.Wait()
	}
	if err != nil {
		t.Fatal(err)
	}
	tools, err := registry.Tools.Get(f.Context())
	if err != nil {
		t.Fatal(err)
	}
	return &local{root: root, tools: tools}
}

func (l *local) plug(t *testing.T, p runtime.Plugin, config any) *runtime.Fiber {
	t.Helper()
	f, err := l.root.Plugin(p, config)
	if err == nil {
		err = f.Wait()
	}
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (l *local) names() []string {
	var names []string
	for _, def := range l.tools.Definitions() {
		names = append(names, def.Name)
	}
	slices.Sort(names)
	return names
}

func (l *local) exec(t *testing.T, tool, args string) *registry.Result {
	t.Helper()
	return l.tools.Execute(t.Context(), &registry.Call{ID: "1", Tool: tool, Args: json.RawMessage(args)})
}

// eventually polls cond for up to ten seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestImport: each remote tool is registered under the prefix with its
// description, its schema byte for byte (key order included) and Traits
// from its hints.
func TestImport(t *testing.T) {
	r := newRemote(t)
	l := newLocal(t)
	l.plug(t, mcpclient.New(mcpclient.Config{Prefix: "ext_"}, r.dial(t)), nil)
	if got, want := l.names(), []string{"ext_edit", "ext_glob", "ext_grep", "ext_list", "ext_read", "ext_write"}; !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	imported := map[string]registry.Definition{}
	for _, def := range l.tools.Definitions() {
		imported[def.Name] = def
	}
	for _, def := range r.d.Tools.Definitions() {
		got := imported["ext_"+def.Name]
		if got.Description != def.Description {
			t.Errorf("%s: description %q, want %q", got.Name, got.Description, def.Description)
		}
		if !bytes.Equal(got.Parameters, def.Parameters) {
			t.Errorf("%s: parameters\n%s\nwant\n%s", got.Name, got.Parameters, def.Parameters)
		}
		if got.Traits.ReadOnly != def.Traits.ReadOnly || got.Traits.Destructive != def.Traits.Destructive {
			t.Errorf("%s: traits %+v, want %+v", got.Name, got.Traits, def.Traits)
		}
	}
}

// TestForward: results come back as the remote registry produced them,
// text and error code alike, and the client's calls share one remote
// policy session (a read grants the edit).
func TestForward(t *testing.T) {
	r := newRemote(t)
	r.file(t, "notes.md", "status: draft\n")
	l := newLocal(t)
	l.plug(t, mcpclient.New(mcpclient.Config{Prefix: "ext_"}, r.dial(t)), nil)

	edit := `{"file_path":"notes.md","old_string":"draft","new_string":"reviewed"}`
	want := r.d.Tools.Execute(t.Context(), &registry.Call{Tool: "edit", Args: json.RawMessage(edit)})
	got := l.exec(t, "ext_edit", edit)
	if !got.IsError || got.Text != want.Text || got.Error.Code != "FS_NOT_OBSERVED" || got.Error.Name != "FsError" {
		t.Fatalf("edit before read = %+v %+v, want the remote's %q with FsError FS_NOT_OBSERVED", got, got.Error, want.Text)
	}
	read := `{"file_path":"notes.md"}`
	if got, want := l.exec(t, "ext_read", read), r.d.Tools.Execute(t.Context(), &registry.Call{Tool: "read", Args: json.RawMessage(read)}); got.IsError || got.Text != want.Text {
		t.Fatalf("read = %q, want %q", got.Text, want.Text)
	}
	if got := l.exec(t, "ext_edit", edit); got.IsError {
		t.Fatalf("edit after read: %q", got.Text)
	}
	content, err := os.ReadFile(filepath.Join(r.d.Workspace, "notes.md"))
	if err != nil || string(content) != "status: reviewed\n" {
		t.Fatalf("notes.md = %q, %v", content, err)
	}
	// The local registry validates against the imported schema before
	// anything is sent.
	if got := l.exec(t, "ext_read", `{"file_path":7}`); got.Error == nil || got.Error.Code != registry.CodeInvalidArgs {
		t.Errorf("bad arguments = %+v, want %s", got, registry.CodeInvalidArgs)
	}
}

// TestFollowsListChanged: a tool registered on the remote appears locally,
// and leaves when the remote removes it.
func TestFollowsListChanged(t *testing.T) {
	r := newRemote(t)
	l := newLocal(t)
	l.plug(t, mcpclient.New(mcpclient.Config{Prefix: "ext_"}, r.dial(t)), nil)
	f, err := r.d.Root.Plugin(runtime.Func("counter", func(ctx *runtime.Context) error {
		return r.d.Tools.Register(ctx, registry.Tool{
			Name:    "count",
			Execute: func(context.Context, *registry.Call) (any, error) { return "1 2 3", nil },
		})
	}), nil)
	if err == nil {
		err = f.Wait()
	}
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "ext_count to be imported", func() bool { return slices.Contains(l.names(), "ext_count") })
	if got := l.exec(t, "ext_count", `{}`); got.IsError || got.Text != "1 2 3" {
		t.Errorf("ext_count = %+v", got)
	}
	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ext_count to be removed", func() bool { return !slices.Contains(l.names(), "ext_count") })
}

// TestDispose closes the connection and removes the tools.
func TestDispose(t *testing.T) {
	r := newRemote(t)
	l := newLocal(t)
	f := l.plug(t, mcpclient.New(mcpclient.Config{Prefix: "ext_"}, r.dial(t)), nil)
	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	if names := l.names(); len(names) != 0 {
		t.Errorf("tools after dispose: %v", names)
	}
	eventually(t, "the remote session to close", func() bool {
		for range r.server.MCP().Sessions() {
			return false
		}
		return true
	})
}

// TestReconnect: while the server is gone, calls fail with MCP_UNAVAILABLE;
// the client reconnects on its own and calls succeed again.
func TestReconnect(t *testing.T) {
	r := newRemote(t)
	r.file(t, "a.txt", "alpha\n")
	l := newLocal(t)
	l.plug(t, mcpclient.New(mcpclient.Config{Prefix: "ext_"}, r.dial(t)), nil)
	var closed int
	for ss := range r.server.MCP().Sessions() {
		ss.Close()
		closed++
	}
	if closed != 1 {
		t.Fatalf("the remote had %d sessions, want 1", closed)
	}
	var down *registry.Result
	eventually(t, "a call to fail while down, then to succeed", func() bool {
		res := l.exec(t, "ext_read", `{"file_path":"a.txt"}`)
		if res.IsError {
			if res.Error.Code != mcpclient.CodeUnavailable {
				t.Fatalf("while down: %+v %+v, want %s", res, res.Error, mcpclient.CodeUnavailable)
			}
			down = res
		}
		return !res.IsError && down != nil
	})
	if !strings.HasPrefix(down.Text, `Error: MCP server "ext_" `) {
		t.Errorf("while down: %q", down.Text)
	}
}

// TestFirstConnectionFails: a server that cannot start fails the plugin.
func TestFirstConnectionFails(t *testing.T) {
	l := newLocal(t)
	f, err := l.root.Plugin(mcpclient.Plugin, mcpclient.Config{Prefix: "ext_", Command: []string{filepath.Join(t.TempDir(), "missing")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Wait(); err == nil || !strings.Contains(err.Error(), "mcpclient ext_: connecting") {
		t.Fatalf("Wait = %v, want a connection error", err)
	}
}

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		config mcpclient.Config
		want   string
	}{
		{mcpclient.Config{Prefix: "ext_"}, "mcpclient: set command or url"},
		{mcpclient.Config{Prefix: "ext_", Command: []string{"x"}, URL: "http://x"}, "mcpclient: set command or url, not both"},
		{mcpclient.Config{Command: []string{"x"}}, `"prefix"`},
	} {
		l := newLocal(t)
		f, err := l.root.Plugin(mcpclient.Plugin, tc.config)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Wait(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: Wait = %v, want %q", tc.config, err, tc.want)
		}
	}
}

// TestHTTP imports over the streamable HTTP transport, from the config.
func TestHTTP(t *testing.T) {
	r := newRemote(t)
	r.file(t, "a.txt", "alpha\n")
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return r.server.MCP() }, nil))
	t.Cleanup(srv.Close)
	l := newLocal(t)
	l.plug(t, mcpclient.Plugin, mcpclient.Config{Prefix: "web_", URL: srv.URL})
	if got := l.exec(t, "web_read", `{"file_path":"a.txt"}`); got.IsError || !strings.Contains(got.Text, "1: alpha") {
		t.Fatalf("web_read = %q", got.Text)
	}
}

// TestStdio imports from cmd/mcp run as a subprocess: from the config, and
// through a server process that is killed and started again.
func TestStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/mcp")
	}
	bin := filepath.Join(t.TempDir(), "mcp")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/mcp").CombinedOutput(); err != nil {
		t.Fatalf("building cmd/mcp: %v\n%s", err, out)
	}
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	readA := func(t *testing.T, l *local) *registry.Result {
		t.Helper()
		return l.exec(t, "ext_read", `{"file_path":"a.txt"}`)
	}

	t.Run("config", func(t *testing.T) {
		l := newLocal(t)
		f := l.plug(t, mcpclient.Plugin, mcpclient.Config{Prefix: "ext_", Command: []string{bin, "--workspace", ws}})
		if got := readA(t, l); got.IsError || !strings.Contains(got.Text, "1: alpha") {
			t.Fatalf("ext_read = %q", got.Text)
		}
		if err := f.Dispose(); err != nil {
			t.Fatal(err)
		}
		if names := l.names(); len(names) != 0 {
			t.Errorf("tools after dispose: %v", names)
		}
	})

	t.Run("killed", func(t *testing.T) {
		started := make(chan *exec.Cmd, 10)
		l := newLocal(t)
		l.plug(t, mcpclient.New(mcpclient.Config{Prefix: "ext_"}, func() mcp.Transport {
			cmd := exec.Command(bin, "--workspace", ws)
			started <- cmd
			return &mcp.CommandTransport{Command: cmd}
		}), nil)
		first := <-started
		if got := readA(t, l); got.IsError {
			t.Fatalf("ext_read = %q", got.Text)
		}
		if err := first.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		var down bool
		eventually(t, "calls to fail while the server is dead, then to succeed", func() bool {
			res := readA(t, l)
			if res.IsError {
				if res.Error.Code != mcpclient.CodeUnavailable {
					t.Fatalf("while down: %q %+v", res.Text, res.Error)
				}
				down = true
			}
			return down && !res.IsError
		})
		select {
		case second := <-started:
			if second.Process.Pid == first.Process.Pid {
				t.Error("reconnected to the killed process")
			}
		default:
			t.Error("no new server process was started")
		}
	})
}

// TestUncompilableSchema: a remote schema the registry cannot compile (a
// remote $ref) is registered as any object, and the server judges the
// arguments.
func TestUncompilableSchema(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "other", Version: "v1"}, nil)
	server.AddTool(&mcp.Tool{
		Name:        "fetch",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"https://example.invalid/x.json"}}}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("got %s", req.Params.Arguments)}}}, nil
	})
	l := newLocal(t)
	l.plug(t, mcpclient.New(mcpclient.Config{Prefix: "o_"}, inMemory(t, server)), nil)
	defs := l.tools.Definitions()
	if len(defs) != 1 || string(defs[0].Parameters) != `{"type":"object"}` {
		t.Fatalf("definitions = %+v, want o_fetch with an open object schema", defs)
	}
	if got := l.exec(t, "o_fetch", `{"x":1}`); got.IsError || got.Text != `got {"x":1}` {
		t.Errorf("o_fetch = %+v", got)
	}
}

// hangingTransport never connects: Connect waits for its context.
type hangingTransport struct{ attempting chan<- struct{} }

func (h hangingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	h.attempting <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestDisposeCancelsReconnection: disposal does not wait for a reconnection
// attempt that hangs (each may take 30 s).
func TestDisposeCancelsReconnection(t *testing.T) {
	r := newRemote(t)
	l := newLocal(t)
	attempting := make(chan struct{}, 10)
	dialed := 0
	inMemory := r.dial(t)
	f := l.plug(t, mcpclient.New(mcpclient.Config{Prefix: "ext_"}, func() mcp.Transport {
		dialed++ // dials happen one at a time, on the connecting goroutine
		if dialed == 1 {
			return inMemory()
		}
		return hangingTransport{attempting}
	}), nil)
	for ss := range r.server.MCP().Sessions() {
		ss.Close()
	}
	select {
	case <-attempting:
	case <-time.After(10 * time.Second):
		t.Fatal("no reconnection attempt")
	}
	disposed := make(chan error, 1)
	go func() { disposed <- f.Dispose() }()
	select {
	case err := <-disposed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Dispose waits for the hanging reconnection")
	}
	if names := l.names(); len(names) != 0 {
		t.Errorf("tools after dispose: %v", names)
	}
}

// inMemory dials server over a fresh in-memory pair per attempt.
func inMemory(t *testing.T, server *mcp.Server) mcpclient.Dialer {
	return func() mcp.Transport {
		serverT, clientT := mcp.NewInMemoryTransports()
		if _, err := server.Connect(context.Background(), serverT, nil); err != nil {
			t.Error(err)
		}
		return clientT
	}
}

// hinted is a server whose tools differ only in their hints and schemas:
// "note" has none, "peek" is read-only, "mkdir" additive, "put" takes a
// path and a count, and "fetch" has a schema the registry cannot compile.
func hinted() *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "hinted", Version: "v1"}, nil)
	no, yes := false, true
	for _, tool := range []*mcp.Tool{
		{Name: "note", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		{Name: "peek", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes}, InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "mkdir", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no}, InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "put", Annotations: &mcp.ToolAnnotations{}, InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"count":{"type":"integer"},"to":{"type":["string","null"]}}}`)},
		{Name: "fetch", InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"$ref":"https://example.invalid/url.json"}}}`)},
	} {
		server.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	}
	return server
}

// TestTraits: the hints give ReadOnly and Destructive (absent hints mean
// mutating and destructive, as the protocol's defaults say), and
// Config.Paths gives Paths, or NoFiles for an empty list.
func TestTraits(t *testing.T) {
	l := newLocal(t)
	l.plug(t, mcpclient.New(mcpclient.Config{Prefix: "h_", Paths: map[string][]string{"put": {"path"}, "mkdir": {"path"}, "note": {}}}, inMemory(t, hinted())), nil)
	want := map[string]registry.Traits{
		"h_note":  {Destructive: true, NoFiles: true},
		"h_peek":  {ReadOnly: true},
		"h_mkdir": {Paths: []string{"path"}},
		"h_put":   {Destructive: true, Paths: []string{"path"}},
		"h_fetch": {Destructive: true},
	}
	defs := l.tools.Definitions()
	if len(defs) != len(want) {
		t.Fatalf("imported %v", l.names())
	}
	for _, def := range defs {
		if w := want[def.Name]; !reflect.DeepEqual(def.Traits, w) {
			t.Errorf("%s: traits %+v, want %+v", def.Name, def.Traits, w)
		}
	}
}

// TestPathsConfig: a declaration that names a tool the server lacks, or an
// argument that is not a string, fails the plugin with the names it could
// have used, and leaves no tool behind.
func TestPathsConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		paths map[string][]string
		want  string
	}{
		{"unknown tools", map[string][]string{"put": {"path"}, "wirte": {"path"}, "Peek": {}},
			`mcpclient h_: paths: the server has no tool "Peek", "wirte" (its tools: fetch, mkdir, note, peek, put)`},
		{"not a string", map[string][]string{"put": {"path", "count"}},
			`mcpclient h_: tool "put": paths: "count" is not a string argument (its string arguments: path)`},
		{"string or null", map[string][]string{"put": {"to"}},
			`mcpclient h_: tool "put": paths: "to" is not a string argument (its string arguments: path)`},
		{"not an argument", map[string][]string{"mkdir": {"file_path"}},
			`mcpclient h_: tool "mkdir": paths: "file_path" is not a string argument (its string arguments: path)`},
		{"no usable schema", map[string][]string{"fetch": {"url"}},
			`mcpclient h_: tool "fetch": paths: "url" is not a string argument (its string arguments: none)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLocal(t)
			f, err := l.root.Plugin(mcpclient.New(mcpclient.Config{Prefix: "h_", Paths: tc.paths}, inMemory(t, hinted())), nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Wait(); err == nil || err.Error() != tc.want {
				t.Fatalf("Wait = %v\nwant %s", err, tc.want)
			}
			if names := l.names(); len(names) != 0 {
				t.Errorf("tools after a failed start: %v", names)
			}
		})
	}
}

// TestPathsFromJSON: the declaration comes from a JSON config as well.
func TestPathsFromJSON(t *testing.T) {
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return hinted() }, nil))
	t.Cleanup(srv.Close)
	l := newLocal(t)
	var config map[string]any
	if err := json.Unmarshal([]byte(`{"prefix": "h_", "url": "`+srv.URL+`", "paths": {"put": ["path"], "note": []}}`), &config); err != nil {
		t.Fatal(err)
	}
	l.plug(t, mcpclient.Plugin, config)
	for _, def := range l.tools.Definitions() {
		switch def.Name {
		case "h_put":
			if !slices.Equal(def.Traits.Paths, []string{"path"}) {
				t.Errorf("h_put: paths %q", def.Traits.Paths)
			}
		case "h_note":
			if !def.Traits.NoFiles {
				t.Errorf("h_note: %+v, want NoFiles", def.Traits)
			}
		}
	}
}

// TestNewRefusesDialConfig: New's transport comes from its Dialer only.
func TestNewRefusesDialConfig(t *testing.T) {
	l := newLocal(t)
	f, err := l.root.Plugin(mcpclient.New(mcpclient.Config{Prefix: "h_", URL: "http://x"}, inMemory(t, hinted())), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Wait(); err == nil || err.Error() != "mcpclient: New dials itself; set no command or url" {
		t.Fatalf("Wait = %v", err)
	}
}

// TestPathsAfterChange: a tool whose declared path argument goes away in a
// later listing is removed, not imported without its paths.
func TestPathsAfterChange(t *testing.T) {
	server := hinted()
	l := newLocal(t)
	l.plug(t, mcpclient.New(mcpclient.Config{Prefix: "h_", Paths: map[string][]string{"mkdir": {"path"}}}, inMemory(t, server)), nil)
	server.AddTool(&mcp.Tool{Name: "mkdir", InputSchema: json.RawMessage(`{"type":"object","properties":{"dir":{"type":"string"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	eventually(t, "h_mkdir to be removed", func() bool { return !slices.Contains(l.names(), "h_mkdir") })
	if got, want := l.names(), []string{"h_fetch", "h_note", "h_peek", "h_put"}; !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
}
