package registry

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/gordis-run/gordis/runtime"
)

type pathArgs struct {
	FilePath string  `json:"file_path"`
	Dest     *string `json:"dest,omitempty"`
	Content  string  `json:"content,omitempty"`
}

// Keys match exactly, so a rule that reads file_path judges the value the
// tool receives; a declared key given twice is refused before any listener
// or body sees it.
func TestExecuteExactKeys(t *testing.T) {
	root, r := newRegistry(t, Config{})
	var listened []string
	if _, err := PreExecute.On(root, func(req *Request, next runtime.Next[Decision]) (Decision, error) {
		listened = append(listened, req.Paths()...)
		return next()
	}); err != nil {
		t.Fatal(err)
	}
	move := func(filePath string, dest *string) string {
		if dest == nil {
			return filePath + " -> -"
		}
		return filePath + " -> " + *dest
	}
	flat := mustDefine(t, "move", func(_ context.Context, _ *Call, a pathArgs) (string, error) {
		return move(a.FilePath, a.Dest), nil
	}, func(s string) string { return s })
	// A slice makes the arguments not flat: the same keys rule applies.
	type taggedPathArgs struct {
		FilePath string   `json:"file_path"`
		Dest     *string  `json:"dest,omitempty"`
		Tags     []string `json:"tags,omitempty"`
	}
	tagged := mustDefine(t, "move_tagged", func(_ context.Context, _ *Call, a taggedPathArgs) (string, error) {
		return move(a.FilePath, a.Dest), nil
	}, func(s string) string { return s })
	for _, tool := range []Tool{flat, tagged} {
		tool.Traits = Traits{Paths: []string{"file_path", "dest"}}
		mustRegister(t, root, r, tool)
	}
	tests := []struct {
		args, text, code string
		paths            []string
	}{
		{`{"file_path":"ok","FILE_PATH":"../x","Dest":"../y"}`, "ok -> -", "", []string{"ok"}},
		{`{"dest":"b","file_path":"a"}`, "a -> b", "", []string{"a", "b"}},
		{`{"file_path":"ok","file_path":"../x"}`, `Error: invalid arguments: duplicate property "file_path"`, CodeInvalidArgs, nil},
		{`{"File_Path":"../x"}`, `Error: invalid arguments: missing required property "file_path"`, CodeInvalidArgs, nil},
	}
	for _, name := range []string{"move", "move_tagged"} {
		for _, tt := range tests {
			listened = nil
			res := r.Execute(context.Background(), &Call{Tool: name, Args: json.RawMessage(tt.args)})
			code := ""
			if res.Error != nil {
				code = res.Error.Code
			}
			if res.Text != tt.text || code != tt.code || !slices.Equal(listened, tt.paths) {
				t.Errorf("%s %s: %q %q, listener saw %q; want %q %q %q", name, tt.args, res.Text, code, listened, tt.text, tt.code, tt.paths)
			}
		}
	}
}

// A wrapper that hands the body other bytes gets those bytes decoded, not
// what the registry decoded from the call.
func TestDefineWrappedExecuteDecodesItsArgs(t *testing.T) {
	root, r := newRegistry(t, Config{})
	tool := mustDefine(t, "echo", func(_ context.Context, _ *Call, a pathArgs) (string, error) { return a.FilePath, nil }, nil)
	inner := tool.Execute
	tool.Execute = func(ctx context.Context, call *Call) (any, error) {
		rewritten := *call
		rewritten.Args = json.RawMessage(`{"file_path":"rewritten"}`)
		return inner(ctx, &rewritten)
	}
	mustRegister(t, root, r, tool)
	if res := r.Execute(context.Background(), &Call{Tool: "echo", Args: json.RawMessage(`{"file_path":"given"}`)}); res.Text != "rewritten" {
		t.Fatalf("got %+v", res)
	}
	// Run directly, Execute decodes and validates on its own.
	if _, err := inner(context.Background(), &Call{Args: json.RawMessage(`{}`)}); err == nil || err.Error() != `invalid arguments: missing required property "file_path"` {
		t.Fatalf("direct Execute: %v", err)
	}
}

// A listener that never returns cannot hold the call past its context; its
// late decision is dropped and the body never runs.
func TestPreExecuteBoundedByContext(t *testing.T) {
	root, r := newRegistry(t, Config{})
	ran := make(chan struct{}, 1)
	mustRegister(t, root, r, Tool{Name: "write", Execute: func(context.Context, *Call) (any, error) {
		ran <- struct{}{}
		return "written", nil
	}})
	entered, release, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	if _, err := PreExecute.On(root, func(req *Request, next runtime.Next[Decision]) (Decision, error) {
		defer close(returned)
		close(entered)
		<-release // ignores req.Context(), as a buggy plugin would
		return next()
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-entered; cancel() }()
	var res *Result
	returnedEarly := make(chan struct{})
	go func() {
		defer close(returnedEarly)
		res = r.Execute(ctx, &Call{ID: "c", Tool: "write"})
	}()
	select {
	case <-returnedEarly:
	case <-time.After(10 * time.Second):
		t.Fatal("the listener holds the call past its context")
	}
	want := ErrorInfo{Message: "tool call aborted before dispatch", Name: NameAbort, Code: CodeAbortedBeforeDispatch}
	if res.Error == nil || *res.Error != want {
		t.Fatalf("got %+v", res)
	}
	close(release)
	<-returned
	select {
	case <-ran:
		t.Fatal("the late decision ran the body")
	case <-time.After(50 * time.Millisecond):
	}

	// A deadline ends the wait the same way, in a batch too.
	block := make(chan struct{})
	defer close(block)
	r2root, r2 := newRegistry(t, Config{})
	mustRegister(t, r2root, r2, Tool{Name: "write", Execute: noop})
	if _, err := PreExecute.On(r2root, func(req *Request, next runtime.Next[Decision]) (Decision, error) {
		<-block
		return next()
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancelTimeout := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancelTimeout()
	for _, res := range r2.ExecuteBatch(ctx, []*Call{{ID: "1", Tool: "write"}, {ID: "2", Tool: "write"}}) {
		if res.Error == nil || res.Error.Code != CodeAbortedBeforeDispatch {
			t.Fatalf("batch: %+v", res)
		}
	}
}

// A body that loses its plugin's services during shutdown or a restart
// tells the model to retry, with a code.
func TestExecuteServiceGoneIsUnavailable(t *testing.T) {
	root, r := newRegistry(t, Config{})
	f := plugin(t, root, "owner", func(*runtime.Context) error { return nil })
	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	mustRegister(t, root, r, Tool{Name: "read", Execute: func(context.Context, *Call) (any, error) {
		return Tools.Get(f.Context())
	}})
	res := r.Execute(context.Background(), &Call{Tool: "read"})
	want := ErrorInfo{
		Message: `the read tool is unavailable while its plugin stops or restarts (runtime: cannot get service "tools": the context is disposed); retry the call`,
		Name:    NameUnavailable,
		Code:    CodeUnavailable,
	}
	if res.Error == nil || *res.Error != want || res.Text != "Error: "+want.Message {
		t.Fatalf("got %+v %+v", res, res.Error)
	}
}
