package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// newRoot is a runtime root closed with the test.
func newRoot(t testing.TB) *runtime.Context {
	t.Helper()
	// Logs (tool panics, listener failures) show only for failing tests.
	root := runtime.New(runtime.WithLogger(slog.New(slog.NewTextHandler(t.Output(), nil))))
	t.Cleanup(func() { root.Close() })
	return root
}

// newRegistry is a registry on a fresh root.
func newRegistry(t testing.TB, cfg Config) (*runtime.Context, *Registry) {
	t.Helper()
	root := newRoot(t)
	return root, New(root, cfg)
}

// plugin applies fn as a plugin under ctx and returns its fiber.
func plugin(t testing.TB, ctx *runtime.Context, name string, fn func(ctx *runtime.Context) error) *runtime.Fiber {
	t.Helper()
	return runtimetest.Plug(t, ctx, runtime.Func(name, fn), nil)
}

func mustRegister(t testing.TB, ctx *runtime.Context, r *Registry, tools ...Tool) {
	t.Helper()
	for _, tool := range tools {
		if err := r.Register(ctx, tool); err != nil {
			t.Fatalf("Register(%s): %v", tool.Name, err)
		}
	}
}

func mustDefine[A, V any](t testing.TB, name string, run func(context.Context, *Call, A) (V, error), render func(V) string) Tool {
	t.Helper()
	tool, err := Define(name, name+" tool", run, render)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// readArgs is the read tool's argument shape: offset and limit are numbers, so the tool judges 1.5 itself.
type readArgs struct {
	FilePath string   `json:"file_path" jsonschema:"description=Path to read\\, resolved by the filesystem backend."`
	Offset   *float64 `json:"offset,omitempty" jsonschema:"description=1-based first line to return. Defaults to 1."`
	Limit    *float64 `json:"limit,omitempty" jsonschema:"description=Maximum number of lines to return. Defaults to 2000."`
}

// the parameters a model sees for a Define tool, byte for byte.
func TestDefineParametersR002(t *testing.T) {
	root, r := newRegistry(t, Config{})
	read := mustDefine(t, "read", func(context.Context, *Call, readArgs) (string, error) { return "", nil }, nil)
	mustRegister(t, root, r, read)
	defs := r.Definitions()
	want := `{"properties":{"file_path":{"type":"string","description":"Path to read, resolved by the filesystem backend."},` +
		`"offset":{"type":"number","description":"1-based first line to return. Defaults to 1."},` +
		`"limit":{"type":"number","description":"Maximum number of lines to return. Defaults to 2000."}},` +
		`"type":"object","required":["file_path"]}`
	if len(defs) != 1 || defs[0].Name != "read" || defs[0].Description != "read tool" || string(defs[0].Parameters) != want {
		t.Fatalf("definitions: %+v\nparameters %s\nwant       %s", defs, defs[0].Parameters, want)
	}
	b, err := json.Marshal(defs[0])
	if err != nil || !strings.HasPrefix(string(b), `{"name":"read","description":"read tool","parameters":{"properties":`) {
		t.Fatalf("definition JSON: %s %v", b, err)
	}
}

// a description that names a configured value replaces the tag's,
// in place (the property order and the rest of the document are unchanged).
func TestDefineDescribe(t *testing.T) {
	run := func(context.Context, *Call, readArgs) (string, error) { return "", nil }
	read, err := Define("read", "read tool", run, nil, Describe("limit", "Maximum number of lines to return. Defaults to 7."))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{"file_path":{"type":"string","description":"Path to read, resolved by the filesystem backend."},` +
		`"offset":{"type":"number","description":"1-based first line to return. Defaults to 1."},` +
		`"limit":{"type":"number","description":"Maximum number of lines to return. Defaults to 7."}},` +
		`"type":"object","required":["file_path"]}`
	if string(read.Parameters) != want {
		t.Fatalf("parameters %s\nwant       %s", read.Parameters, want)
	}
	if _, err := Define("read", "", run, nil, Describe("lmit", "typo")); err == nil || !strings.Contains(err.Error(), `no property "lmit"`) {
		t.Fatalf("a description of a missing parameter: %v", err)
	}
}

func TestDefineRejects(t *testing.T) {
	if _, err := Define[readArgs, string]("x", "", nil, nil); err == nil {
		t.Error("nil run accepted")
	}
	run := func(context.Context, *Call, int) (string, error) { return "", nil }
	if _, err := Define("x", "", run, nil); err == nil {
		t.Error("non-struct arguments accepted")
	}
}

func noop(context.Context, *Call) (any, error) { return "ok", nil }

func TestRegister(t *testing.T) {
	root, r := newRegistry(t, Config{})
	tests := []struct {
		name string
		tool Tool
		want string
	}{
		{"empty name", Tool{Execute: noop}, "registry: tool without a name"},
		{"nil execute", Tool{Name: "x"}, `registry: tool "x" has no Execute`},
		{"bad parameters", Tool{Name: "x", Execute: noop, Parameters: json.RawMessage(`{"type":7}`)}, `registry: tool "x": parameters: `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := r.Register(root, tt.tool)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v, want prefix %q", err, tt.want)
			}
		})
	}
	mustRegister(t, root, r, Tool{Name: "b", Execute: noop}, Tool{Name: "a", Execute: noop}, Tool{Name: "c", Execute: noop})
	if err := r.Register(root, Tool{Name: "a", Execute: noop}); err == nil || err.Error() != `registry: tool "a" is already registered` {
		t.Fatalf("duplicate: %v", err)
	}
	// Registration order, not name order; no Parameters means an empty object.
	var names []string
	for _, d := range r.Definitions() {
		names = append(names, d.Name)
		if string(d.Parameters) != `{"type":"object","properties":{}}` {
			t.Errorf("%s parameters %s", d.Name, d.Parameters)
		}
	}
	if strings.Join(names, ",") != "b,a,c" {
		t.Fatalf("order %v", names)
	}
}

// tools belong to the registering plugin and vanish with it.
func TestRegisterScopedToFiber(t *testing.T) {
	root, r := newRegistry(t, Config{})
	mustRegister(t, root, r, Tool{Name: "first", Execute: noop})
	register := func(ctx *runtime.Context) error {
		if err := r.Register(ctx, Tool{Name: "mine", Execute: noop}); err != nil {
			return err
		}
		return r.Register(ctx, Tool{Name: "also-mine", Execute: noop})
	}
	f := plugin(t, root, "tools", register)
	mustRegister(t, root, r, Tool{Name: "last", Execute: noop})
	if got := names(r.Definitions()); got != "first,mine,also-mine,last" {
		t.Fatalf("before dispose: %s", got)
	}
	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	if got := names(r.Definitions()); got != "first,last" {
		t.Fatalf("after dispose: %s", got)
	}
	// A tool that is gone (its plugin may be restarting) is unavailable, a
	// name never registered unknown.
	want := ErrorInfo{Message: "the mine tool is unavailable while its plugin stops or restarts; retry the call", Name: NameUnavailable, Code: CodeUnavailable}
	if res := r.Execute(context.Background(), &Call{Tool: "mine"}); res.Error == nil || *res.Error != want || res.Text != "Error: "+want.Message {
		t.Fatalf("disposed tool still runs: %+v", res)
	}
	if res := r.Execute(context.Background(), &Call{Tool: "never"}); res.Error == nil || res.Error.Code != CodeUnknownTool {
		t.Fatalf("unknown tool: %+v", res)
	}
	// The names are free again: a new application registers them.
	plugin(t, root, "tools", register)
	if got := names(r.Definitions()); got != "first,last,mine,also-mine" {
		t.Fatalf("after re-apply: %s", got)
	}
	// A disposed context cannot register.
	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(f.Context(), Tool{Name: "late", Execute: noop}); err == nil {
		t.Fatal("registered on a disposed context")
	}
}

func names(defs []Definition) string {
	var s []string
	for _, d := range defs {
		s = append(s, d.Name)
	}
	return strings.Join(s, ",")
}

// results records every tools/result emission.
type results struct {
	mu  sync.Mutex
	got []*Result
}

func listenResults(t testing.TB, root *runtime.Context) *results {
	t.Helper()
	rs := &results{}
	if _, err := ResultEvent.On(root, func(res *Result) error {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		rs.got = append(rs.got, res)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return rs
}

func (rs *results) list() []*Result {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]*Result(nil), rs.got...)
}

// await returns the emissions once there are n: after its context has
// ended, a batch returns without waiting for the tools/result listeners.
func (rs *results) await(t testing.TB, n int) []*Result {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if got := rs.list(); len(got) >= n {
			return got
		}
	}
	t.Fatalf("%d results emitted, want %d", len(rs.list()), n)
	return nil
}

type echoArgs struct {
	FilePath   string   `json:"file_path"`
	Offset     *float64 `json:"offset,omitempty"`
	ReplaceAll *bool    `json:"replace_all,omitempty"`
}

type counted struct {
	N int `json:"n"`
}

// failWith is a tool body that returns err (or panics with p).
func failWith(err error, p any) func(context.Context, *Call) (any, error) {
	return func(context.Context, *Call) (any, error) {
		if p != nil {
			panic(p)
		}
		return nil, err
	}
}

// TestExecute covers the pipeline's steps and the error mapping table.
func TestExecute(t *testing.T) {
	root, r := newRegistry(t, Config{})
	rs := listenResults(t, root)
	echo := mustDefine(t, "echo", func(_ context.Context, call *Call, a echoArgs) (echoArgs, error) {
		return a, nil
	}, func(a echoArgs) string {
		off := "none"
		if a.Offset != nil {
			off = fmt.Sprint(*a.Offset)
		}
		return a.FilePath + " @ " + off
	})
	stale := &fs.Error{Code: fs.CodeStaleVersion, Message: "blocked"}
	mustRegister(t, root, r,
		echo,
		mustDefine(t, "count", func(_ context.Context, _ *Call, a counted) (int, error) { return a.N, nil }, nil),
		Tool{Name: "typed", Execute: failWith(stale, nil)},
		Tool{Name: "wrapped", Execute: failWith(fmt.Errorf("saving a.txt: %w", stale), nil)},
		Tool{Name: "plain", Execute: failWith(errors.New("disk on fire"), nil)},
		Tool{Name: "panics", Execute: failWith(nil, "boom")},
		Tool{Name: "badrender", Execute: noop, Render: func(any) string { panic("no render") }},
		Tool{Name: "value", Execute: func(context.Context, *Call) (any, error) { return map[string]int{"a": 1}, nil }},
		Tool{Name: "args", Execute: func(_ context.Context, c *Call) (any, error) { return string(c.Args), nil }},
	)
	type want struct {
		text  string
		name  string
		code  string
		value any
	}
	tests := []struct {
		name string
		tool string
		args string
		want want
	}{
		{"success renders", "echo", `{"file_path":"a.txt","offset":1.5}`, want{text: "a.txt @ 1.5"}},
		// the root is open.
		{"unknown keys ignored", "echo", `{"file_path":"a","replaceAll":false,"sandbox_permissions":"x"}`, want{text: "a @ none"}},
		{"empty args are {}", "args", ``, want{text: `{}`, value: `{}`}},
		{"default render: string", "plain", `{}`, want{text: "Error: disk on fire"}},
		{"default render: JSON", "value", `{}`, want{text: `{"a":1}`}},
		{"unknown tool", "nope", `{}`, want{`Error: unknown tool "nope"`, NameUnknown, CodeUnknownTool, nil}},
		//
		{"missing required", "echo", `{}`, want{`Error: invalid arguments: missing required property "file_path"`, NameArgs, CodeInvalidArgs, nil}},
		{"several violations", "echo", `{"offset":"1","replace_all":"yes"}`, want{
			`Error: invalid arguments: missing required property "file_path"; "offset" must be a number; "replace_all" must be a boolean`,
			NameArgs, CodeInvalidArgs, nil}},
		{"null is a type violation", "echo", `{"file_path":7,"offset":null}`, want{
			`Error: invalid arguments: "file_path" must be a string; "offset" must be a number`, NameArgs, CodeInvalidArgs, nil}},
		{"invalid JSON", "echo", `{"file_path":`, want{`Error: invalid arguments: invalid JSON: unexpected EOF`, NameArgs, CodeInvalidArgs, nil}},
		// R-022 cannot arise: JSON text has no NaN, so it is invalid JSON.
		{"NaN", "echo", `{"file_path":"a","offset":NaN}`, want{
			`Error: invalid arguments: invalid JSON: invalid character 'N' looking for beginning of value`, NameArgs, CodeInvalidArgs, nil}},
		{"not an object", "echo", `["a"]`, want{`Error: invalid arguments: expected an object, got an array`, NameArgs, CodeInvalidArgs, nil}},
		{"schema-valid but not decodable", "count", `{"n":2.0}`, want{
			`Error: invalid arguments: "n": cannot use number 2.0 as int`, NameArgs, CodeInvalidArgs, nil}},
		//
		{"typed error", "typed", `{}`, want{"Error: blocked", "FsError", fs.CodeStaleVersion, nil}},
		{"wrapped typed error", "wrapped", `{}`, want{"Error: saving a.txt: blocked", "FsError", fs.CodeStaleVersion, nil}},
		{"plain error", "plain", `{}`, want{"Error: disk on fire", "", "", nil}},
		{"panic", "panics", `{}`, want{`Error: tool "panics" panicked: boom`, NamePanic, CodePanic, nil}},
		{"render panic", "badrender", `{}`, want{`Error: tool "badrender" panicked: no render`, NamePanic, CodePanic, nil}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := &Call{ID: fmt.Sprint("call-", i), Tool: tt.tool, Args: json.RawMessage(tt.args)}
			res := r.Execute(context.Background(), call)
			if res.CallID != call.ID || res.Tool != tt.tool || res.Text != tt.want.text {
				t.Fatalf("result %+v\nwant text %q", res, tt.want.text)
			}
			isError := tt.want.name != "" || strings.HasPrefix(tt.want.text, "Error: ")
			if res.IsError != isError {
				t.Fatalf("IsError = %v", res.IsError)
			}
			if !isError {
				if res.Error != nil {
					t.Fatalf("success with error %+v", res.Error)
				}
				if tt.want.value != nil && res.Value != tt.want.value {
					t.Fatalf("value %#v", res.Value)
				}
				return
			}
			wantInfo := ErrorInfo{Message: strings.TrimPrefix(tt.want.text, "Error: "), Name: tt.want.name, Code: tt.want.code}
			if res.Error == nil || *res.Error != wantInfo || res.Value != nil {
				t.Fatalf("error %+v, want %+v (value %v)", res.Error, wantInfo, res.Value)
			}
		})
	}
	// Step 6: exactly one tools/result per call, failures included, as returned.
	if got := rs.list(); len(got) != len(tests) {
		t.Fatalf("%d results emitted for %d calls", len(got), len(tests))
	}
}

// 1.5 and 2.0 reach the tool as numbers; the tool judges them.
func TestDefineKeepsNumbers(t *testing.T) {
	root, r := newRegistry(t, Config{})
	var got []float64
	read := mustDefine(t, "read", func(_ context.Context, _ *Call, a readArgs) (string, error) {
		got = append(got, *a.Offset)
		return "", nil
	}, nil)
	mustRegister(t, root, r, read)
	for _, args := range []string{`{"file_path":"a","offset":1.5}`, `{"file_path":"a","offset":2.0}`, `{"file_path":"a","offset":-3}`} {
		if res := r.Execute(context.Background(), &Call{Tool: "read", Args: json.RawMessage(args)}); res.IsError {
			t.Fatalf("%s: %s", args, res.Text)
		}
	}
	if fmt.Sprint(got) != "[1.5 2 -3]" {
		t.Fatalf("offsets %v", got)
	}
}

func TestExecutePreExecute(t *testing.T) {
	root, r := newRegistry(t, Config{})
	ran := 0
	mustRegister(t, root, r, Tool{Name: "write", Execute: func(context.Context, *Call) (any, error) { ran++; return "written", nil }})
	exec := func() *Result { return r.Execute(context.Background(), &Call{ID: "c", Tool: "write"}) }

	var seen *Request
	dispose, err := PreExecute.On(root, func(req *Request, next runtime.Next[Decision]) (Decision, error) {
		seen = req
		return Decision{Deny: true, Reason: "writes are off in plan mode"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res := exec()
	want := ErrorInfo{Message: "writes are off in plan mode", Name: NameDenied, Code: CodeDenied}
	if res.Text != "Error: writes are off in plan mode" || !res.IsError || *res.Error != want || ran != 0 {
		t.Fatalf("deny: %+v %+v ran=%d", res, res.Error, ran)
	}
	if seen == nil || seen.Call.ID != "c" || string(seen.Call.Args) != `{}` || seen.Context() == nil {
		t.Fatalf("listener saw %+v", seen)
	}
	dispose()

	dispose, _ = PreExecute.On(root, func(*Request, runtime.Next[Decision]) (Decision, error) {
		return Decision{Deny: true}, nil
	})
	if res := exec(); res.Text != "Error: tool call denied" || res.Error.Code != CodeDenied || ran != 0 {
		t.Fatalf("deny without reason: %+v", res)
	}
	dispose()

	// A failing permission plugin fails closed.
	dispose, _ = PreExecute.On(root, func(*Request, runtime.Next[Decision]) (Decision, error) {
		return Decision{}, errors.New("policy store offline")
	})
	if res := exec(); !strings.HasPrefix(res.Text, "Error: permission check failed: ") || !strings.Contains(res.Text, "policy store offline") || res.Error.Code != CodeDenied || ran != 0 {
		t.Fatalf("listener error: %+v", res)
	}
	dispose()

	// So does a panicking one: the waterfall turns the panic into its error.
	dispose, _ = PreExecute.On(root, func(*Request, runtime.Next[Decision]) (Decision, error) {
		panic("rule table corrupt")
	})
	if res := exec(); !strings.HasPrefix(res.Text, "Error: permission check failed: ") || !strings.Contains(res.Text, "rule table corrupt") || res.Error.Code != CodeDenied || ran != 0 {
		t.Fatalf("listener panic: %+v", res)
	}
	dispose()

	// A listener that defers to the rest of the chain allows the call.
	dispose, _ = PreExecute.On(root, func(_ *Request, next runtime.Next[Decision]) (Decision, error) { return next() })
	if res := exec(); res.IsError || res.Text != "written" || ran != 1 {
		t.Fatalf("allow: %+v", res)
	}
	dispose()
}

//
func TestExecuteCancellation(t *testing.T) {
	root, r := newRegistry(t, Config{})
	ran := 0
	started, coopStarted := make(chan struct{}), make(chan struct{})
	mustRegister(t, root, r,
		Tool{Name: "write", Execute: func(context.Context, *Call) (any, error) { ran++; return "written", nil }},
		// Ignores cancellation and succeeds, like a write that landed.
		Tool{Name: "stubborn", Execute: func(ctx context.Context, _ *Call) (any, error) {
			close(started)
			<-ctx.Done()
			return "written anyway", nil
		}},
		Tool{Name: "cooperative", Execute: func(ctx context.Context, _ *Call) (any, error) {
			close(coopStarted)
			<-ctx.Done()
			return nil, &fs.Error{Code: fs.CodeAborted, Message: "read aborted", Err: ctx.Err()}
		}},
	)
	pre, cancel := context.WithCancel(context.Background())
	cancel()
	res := r.Execute(pre, &Call{ID: "1", Tool: "write"})
	want := ErrorInfo{Message: "tool call aborted before dispatch", Name: NameAbort, Code: CodeAbortedBeforeDispatch}
	if res.Text != "Error: tool call aborted before dispatch" || *res.Error != want || ran != 0 {
		t.Fatalf("pre-cancelled: %+v ran=%d", res, ran)
	}
	// Even an unknown tool or bad arguments: cancellation is checked first.
	if res := r.Execute(pre, &Call{Tool: "nope", Args: json.RawMessage(`x`)}); res.Error.Code != CodeAbortedBeforeDispatch {
		t.Fatalf("pre-cancelled unknown tool: %+v", res)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	res = r.Execute(ctx, &Call{Tool: "stubborn"})
	want = ErrorInfo{Message: "tool call aborted", Name: NameAbort, Code: CodeAborted}
	if res.Text != "Error: tool call aborted" || *res.Error != want || res.Value != nil {
		t.Fatalf("late success: %+v", res)
	}

	// The body's own error wins over the registry's abort result.
	ctx, cancel = context.WithCancel(context.Background())
	go func() { <-coopStarted; cancel() }()
	res = r.Execute(ctx, &Call{Tool: "cooperative"})
	want = ErrorInfo{Message: "read aborted", Name: "FsError", Code: fs.CodeAborted}
	if res.Text != "Error: read aborted" || *res.Error != want {
		t.Fatalf("body error after cancel: %+v", res)
	}
}

// A tools/result listener that fails does not change the result.
func TestExecuteResultListenerFailure(t *testing.T) {
	root, r := newRegistry(t, Config{})
	mustRegister(t, root, r, Tool{Name: "t", Execute: noop})
	if _, err := ResultEvent.On(root, func(*Result) error { return errors.New("log full") }); err != nil {
		t.Fatal(err)
	}
	if _, err := ResultEvent.On(root, func(*Result) error { panic("listener panic") }); err != nil {
		t.Fatal(err)
	}
	rs := listenResults(t, root)
	res := r.Execute(context.Background(), &Call{ID: "x", Tool: "t"})
	if res.IsError || res.Text != "ok" {
		t.Fatalf("result changed: %+v", res)
	}
	if got := rs.list(); len(got) != 1 || got[0] != res {
		t.Fatalf("emitted %v", got)
	}
}

func TestExecuteNeverPanicsOnNil(t *testing.T) {
	_, r := newRegistry(t, Config{})
	//lint:ignore SA1012 the contract: Execute never panics, even on a nil context
	res := r.Execute(nil, nil)
	if !res.IsError || res.Error.Code != CodeUnknownTool {
		t.Fatalf("%+v", res)
	}
	if got := r.ExecuteBatch(context.Background(), []*Call{nil}); len(got) != 1 || got[0].Error.Code != CodeUnknownTool {
		t.Fatalf("%+v", got)
	}
}

// Registration, disposal, listing and execution from many goroutines at once
// (run with -race: the registry's and the prompt's maps are shared).
func TestConcurrentRegisterExecute(t *testing.T) {
	root, r := newRegistry(t, Config{})
	p := NewPrompt()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 20 {
				name := fmt.Sprintf("tool-%d-%d", w, i)
				f, err := root.Plugin(runtime.Func(name, func(ctx *runtime.Context) error {
					if err := r.Register(ctx, Tool{Name: name, Execute: noop}); err != nil {
						return err
					}
					return p.Add(ctx, Section{Name: name, Order: i, Text: name})
				}), nil)
				if err != nil {
					t.Error(err)
					return
				}
				if err := f.Wait(); err != nil {
					t.Error(err)
				}
				if res := r.Execute(context.Background(), &Call{Tool: name}); res.IsError {
					t.Errorf("%s: %s", name, res.Text)
				}
				if err := f.Dispose(); err != nil {
					t.Error(err)
				}
			}
		})
		wg.Go(func() {
			for range 50 {
				r.Definitions()
				p.Assemble()
				r.ExecuteBatch(context.Background(), calls("tool-0-1:a", "tool-1-1:b"))
			}
		})
	}
	wg.Wait()
	if defs := r.Definitions(); len(defs) != 0 {
		t.Fatalf("left behind: %v", names(defs))
	}
	if got := p.Assemble(); got != "" {
		t.Fatalf("sections left behind: %q", got)
	}
}

// TestChangedEvent: tools/changed announces each registration and each
// removal (by dispose), once, with the tool's name; Definitions carries the
// tool's traits without sending them to a model.
func TestChangedEvent(t *testing.T) {
	root, r := newRegistry(t, Config{})
	var mu sync.Mutex
	var got []string
	if _, err := ChangedEvent.On(root, func(c Change) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, fmt.Sprintf("%s:%v", c.Tool, c.Added))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	traits := Traits{ReadOnly: true, Paths: []string{"file_path"}}
	f := plugin(t, root, "tools", func(ctx *runtime.Context) error {
		return r.Register(ctx, Tool{Name: "peek", Execute: noop, Traits: traits})
	})
	defs := r.Definitions()
	if len(defs) != 1 || !defs[0].Traits.ReadOnly || strings.Join(defs[0].Traits.Paths, ",") != "file_path" {
		t.Fatalf("definitions = %+v", defs)
	}
	if raw, _ := json.Marshal(defs[0]); strings.Contains(string(raw), "ReadOnly") || strings.Contains(string(raw), "raits") {
		t.Fatalf("traits reach the model: %s", raw)
	}
	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, " ") != "peek:true peek:false" {
		t.Fatalf("changes = %v", got)
	}
}

// A 100,000-digit number is quoted clipped (fs.Clip) in the invalid
// arguments text, not whole.
func TestArgsErrorClipsValue(t *testing.T) {
	root, r := newRegistry(t, Config{})
	mustRegister(t, root, r, mustDefine(t, "count", func(_ context.Context, _ *Call, a counted) (int, error) { return a.N, nil }, nil))
	digits := "1" + strings.Repeat("0", 99999)
	res := r.Execute(context.Background(), &Call{ID: "1", Tool: "count", Args: json.RawMessage(`{"n":` + digits + `}`)})
	shown := "number " + digits
	want := `invalid arguments: "n": cannot use ` + shown[:1024] + "…(98983 bytes more) as int"
	if res.Error == nil || res.Error.Message != want || res.Error.Code != CodeInvalidArgs {
		t.Fatalf("error %.200q…, want %.200q…", res.Error, want)
	}
	if len(res.Text) >= 2048 {
		t.Fatalf("error text is %d bytes", len(res.Text))
	}
}
