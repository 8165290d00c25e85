package toolsearch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/fslocal"
	"github.com/gordis-run/gordis/plugins/toolsearch"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// session is the smallest registry.Session: the workspace is its cwd.
type session struct{ cwd string }

func (s session) ID() string            { return "session:" + s.cwd }
func (s session) Cwd() string           { return s.cwd }
func (s session) Done() <-chan struct{} { return nil }

// generic is the local provider with only the seam's core methods, so that
// fs.Walk takes its generic fallback instead of the provider's Walker.
type generic struct{ fs.FileSystem }

// genericPlugin provides fslocal's confined provider as generic.
var genericPlugin = runtime.Configured("fsgeneric", func(ctx *runtime.Context, cfg fslocal.Config) error {
	f, err := fslocal.Open(cfg)
	if err != nil {
		return err
	}
	if _, err := ctx.Effect(func() (func() error, error) { return f.Close, nil }); err != nil {
		f.Close()
		return err
	}
	return fs.Service.Provide(ctx, generic{f})
})

// provider names the two ways the tools walk: the provider's Walker, and
// fs.Walk's generic fallback over the core seam.
type provider int

const (
	walker provider = iota
	fallback
)

func (p provider) String() string { return [...]string{"walker", "generic"}[p] }

type env struct {
	ws     string
	s      session
	tools  *registry.Registry
	prompt *registry.Prompt
	fiber  *runtime.Fiber
	seq    atomic.Int64
}

type options struct {
	provider provider
	config   any
}

// setup is a deployment of the tools over a confined local provider whose
// workspace is a fresh temporary directory.
func setup(t testing.TB, o options) *env {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := runtimetest.New(t)
	runtimetest.Plug(t, root, registry.Plugin, nil)
	p := fslocal.Plugin
	if o.provider == fallback {
		p = genericPlugin
	}
	runtimetest.Plug(t, root, p, fslocal.Config{Cwd: ws})
	e := &env{ws: ws, s: session{cwd: ws}}
	e.fiber = runtimetest.Plug(t, root, toolsearch.Plugin, o.config)
	var ok bool
	if e.tools, ok = registry.Tools.Lookup(root); !ok {
		t.Fatal("no tools service")
	}
	if e.prompt, ok = registry.Prompts.Lookup(root); !ok {
		t.Fatal("no prompt service")
	}
	return e
}

// both runs f once with each provider.
func both(t *testing.T, f func(t *testing.T, p provider)) {
	for _, p := range []provider{walker, fallback} {
		t.Run(p.String(), func(t *testing.T) { f(t, p) })
	}
}

type args = map[string]any

// call runs one tool call in the workspace's session.
func (e *env) call(tool string, a any) *registry.Result {
	return e.callCtx(context.Background(), tool, a)
}

func (e *env) callCtx(ctx context.Context, tool string, a any) *registry.Result {
	raw, ok := a.(string)
	if !ok {
		b, err := json.Marshal(a)
		if err != nil {
			panic(err)
		}
		raw = string(b)
	}
	return e.tools.Execute(ctx, &registry.Call{
		ID: fmt.Sprint(e.seq.Add(1)), Tool: tool, Args: json.RawMessage(raw), Session: e.s,
	})
}

func (e *env) path(name string) string { return filepath.Join(e.ws, filepath.FromSlash(name)) }

// base is the modification time every written file gets unless a test
// sets another, so that ties fall back to the walk order.
var base = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// write creates the files of tree (name → content), with their parents.
func (e *env) write(t testing.TB, tree map[string]string) {
	t.Helper()
	for name, content := range tree {
		p := e.path(name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		e.touch(t, name, base)
	}
}

// touch sets a file's modification time.
func (e *env) touch(t testing.TB, name string, at time.Time) {
	t.Helper()
	if err := os.Chtimes(e.path(name), at, at); err != nil {
		t.Fatal(err)
	}
}

func (e *env) mkdir(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.MkdirAll(e.path(n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func (e *env) symlink(t testing.TB, target, name string) {
	t.Helper()
	if err := os.Symlink(target, e.path(name)); err != nil {
		t.Fatal(err)
	}
}

// row is one call and what the model must see: the exact text, and for an
// error (a text starting with "Error: ") its code, "" for none.
type row struct {
	name string
	tool string
	args any
	want string
	code string
	// skip names why the generic fallback cannot pass the row.
	skipGeneric string
}

// check runs rows against e, each as a subtest.
func check(t *testing.T, e *env, p provider, rows []row) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if p == fallback && r.skipGeneric != "" {
				t.Skip("generic fallback: " + r.skipGeneric)
			}
			want(t, e.call(r.tool, r.args), r.want, r.code)
		})
	}
}

// want asserts a result's exact text, its error flag and its code; an
// error with a code has the name the code's family gives it.
func want(t *testing.T, r *registry.Result, text, code string) {
	t.Helper()
	isErr := strings.HasPrefix(text, "Error: ")
	if r.IsError != isErr || r.Text != text {
		t.Fatalf("got (error %v)\n%q\nwant\n%q", r.IsError, r.Text, text)
	}
	got, name := "", ""
	if r.Error != nil {
		got, name = r.Error.Code, r.Error.Name
	}
	if got != code {
		t.Fatalf("code %q, want %q (%+v)", got, code, r.Error)
	}
	wantName := ""
	switch {
	case strings.HasPrefix(code, "SEARCH_"):
		wantName = "SearchError"
	case strings.HasPrefix(code, "FS_"):
		wantName = "FsError"
	case code == registry.CodeInvalidArgs:
		wantName = registry.NameArgs
	case code == registry.CodeAbortedBeforeDispatch:
		wantName = registry.NameAbort
	}
	if name != wantName {
		t.Fatalf("name %q, want %q", name, wantName)
	}
}

// value decodes a result's canonical value as JSON, as a host sees it.
func value[V any](t *testing.T, r *registry.Result) V {
	t.Helper()
	var v V
	b, err := json.Marshal(r.Value)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// lines joins with "\n", the separator of every listing.
func lines(s ...string) string { return strings.Join(s, "\n") }
