package gordis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/fslocal"
	"github.com/gordis-run/gordis/plugins/toolfs"
	"github.com/gordis-run/gordis/plugins/toolsearch"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// session is the smallest registry.Session: the policy tells sessions apart
// by identity.
type session struct {
	cwd  string
	done chan struct{}
}

func newSession(cwd string) *session { return &session{cwd: cwd, done: make(chan struct{})} }

func (s *session) ID() string            { return "test" }
func (s *session) Cwd() string           { return s.cwd }
func (s *session) Done() <-chan struct{} { return s.done }

func build(t *testing.T, opts Options) *Deployment {
	t.Helper()
	d, cleanup, err := Build(opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	t.Cleanup(cleanup)
	return d
}

func toolNames(r *registry.Registry) []string {
	var names []string
	for _, d := range r.Definitions() {
		names = append(names, d.Name)
	}
	return names
}

func execute(t *testing.T, d *Deployment, s registry.Session, tool string, args any) *registry.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return d.Tools.Execute(context.Background(), &registry.Call{ID: tool, Tool: tool, Args: raw, Session: s})
}

func TestBuild(t *testing.T) {
	dir := t.TempDir()
	d := build(t, Options{Workspace: dir})

	if got, want := toolNames(d.Tools), []string{"list", "read", "write", "edit", "glob", "grep"}; !slices.Equal(got, want) {
		t.Errorf("tools = %q, want %q", got, want)
	}
	if d.Workspace != dir {
		t.Errorf("Workspace = %q, want %q", d.Workspace, dir)
	}
	if p := d.Prompt.Assemble(); !strings.Contains(p, "Use the edit tool") || !strings.Contains(p, "Use the grep tool") {
		t.Errorf("prompt lacks the tool guidance:\n%s", p)
	}
	// Relative paths resolve against the workspace.
	res := execute(t, d, newSession(dir), "write", map[string]string{"file_path": "a.txt", "content": "hi\n"})
	if res.IsError {
		t.Fatalf("write: %s", res.Text)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("a.txt = %q, %v", b, err)
	}
}

// The default deployment is confined to the workspace and its roots;
// Unconfined lifts that.
func TestBuildConfinesToTheWorkspace(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, docs := filepath.Join(base, "ws"), filepath.Join(base, "docs")
	for _, dir := range []string{ws, docs} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	escape := map[string]string{"file_path": "../new.txt", "content": "x"}
	d := build(t, Options{Workspace: ws, Roots: []fslocal.Root{{Path: docs, ReadOnly: true}}})
	for _, tc := range []struct {
		tool string
		args map[string]string
		want string
	}{
		{"write", escape, `Error: cannot resolve "` + base + `/new.txt": outside the workspace "` + ws + `"`},
		{"read", map[string]string{"file_path": "/etc/hostname"}, `Error: cannot resolve "/etc/hostname": outside the workspace "` + ws + `"`},
		{"write", map[string]string{"file_path": "../docs/a.md", "content": "x"}, `Error: cannot write "` + docs + `/a.md": the root "` + docs + `" is read-only`},
	} {
		res := execute(t, d, newSession(ws), tc.tool, tc.args)
		if !res.IsError || res.Text != tc.want || res.Error.Code != "FS_SANDBOX_DENIED" {
			t.Errorf("%s %v = %q (%+v), want FS_SANDBOX_DENIED %q", tc.tool, tc.args, res.Text, res.Error, tc.want)
		}
	}
	if entries, _ := os.ReadDir(base); len(entries) != 2 {
		t.Errorf("a refused write left %d entries beside the workspace", len(entries)-2)
	}

	open := build(t, Options{Workspace: ws, Unconfined: true})
	if res := execute(t, open, newSession(ws), "write", escape); res.IsError {
		t.Errorf("unconfined write outside: %s", res.Text)
	}
}

func TestBuildDefaultWorkspace(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	d := build(t, Options{})
	if d.Workspace != dir {
		t.Errorf("Workspace = %q, want the process cwd %q", d.Workspace, dir)
	}
}

func TestBuildPassesConfigs(t *testing.T) {
	dir := t.TempDir()
	d := build(t, Options{Workspace: dir, Tools: toolfs.Config{ListMaxEntries: 7}, Search: toolsearch.Config{GrepMaxMatches: 1}})
	list := d.Tools.Definitions()[0]
	if !strings.Contains(list.Description, "up to 7 are returned") {
		t.Errorf("list description ignores Tools.ListMaxEntries: %s", list.Description)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hit\nhit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := execute(t, d, newSession(dir), "grep", map[string]string{"pattern": "hit"})
	if res.IsError || !strings.HasPrefix(res.Text, "Found 1 of 2 matches\n") {
		t.Errorf("grep ignores Search.GrepMaxMatches: %q", res.Text)
	}
}

func TestBuildCleanupDisposesEverything(t *testing.T) {
	d, cleanup, err := Build(Options{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// A host plugin that depends on every service of the stack.
	tornDown := false
	probe := runtimetest.Plug(t, d.Root, runtime.Func("probe", func(ctx *runtime.Context) error {
		_, err := ctx.Effect(func() (func() error, error) {
			return func() error { tornDown = true; return nil }, nil
		})
		return err
	}, runtime.Inject(fs.Service, registry.Tools, registry.Prompts)), nil)

	cleanup()

	if probe.State() != runtime.Disposed || !tornDown {
		t.Errorf("probe after cleanup: %v, torn down %v; want disposed", probe.State(), tornDown)
	}
	if names := toolNames(d.Tools); len(names) != 0 {
		t.Errorf("tools after cleanup = %q, want none", names)
	}
	if p := d.Prompt.Assemble(); p != "" {
		t.Errorf("prompt after cleanup = %q, want empty", p)
	}
	if _, err := d.Root.Plugin(runtime.Func("late", func(*runtime.Context) error { return nil }), nil); !errors.Is(err, runtime.ErrInactive) {
		t.Errorf("Plugin after cleanup: err = %v, want ErrInactive", err)
	}
}

// With the policy, an edit needs a prior read (FS_NOT_OBSERVED); NoPolicy
// really leaves it out and the same edit succeeds.
func TestBuildNoPolicy(t *testing.T) {
	for _, tc := range []struct {
		noPolicy bool
		wantErr  bool
		wantCode string
	}{
		{noPolicy: false, wantErr: true, wantCode: "FS_NOT_OBSERVED"},
		{noPolicy: true},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		d := build(t, Options{Workspace: dir, NoPolicy: tc.noPolicy})
		res := execute(t, d, newSession(dir), "edit", map[string]string{"file_path": "a.txt", "old_string": "old", "new_string": "new"})
		if res.IsError != tc.wantErr {
			t.Errorf("NoPolicy=%v: edit without read: isError=%v (%s), want %v", tc.noPolicy, res.IsError, res.Text, tc.wantErr)
		}
		if tc.wantErr && (res.Error == nil || res.Error.Code != tc.wantCode) {
			t.Errorf("NoPolicy=%v: error = %+v, want code %s", tc.noPolicy, res.Error, tc.wantCode)
		}
		want := "new\n"
		if tc.wantErr {
			want = "old\n"
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != want {
			t.Errorf("NoPolicy=%v: a.txt = %q, want %q", tc.noPolicy, b, want)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"missing workspace", Options{Workspace: filepath.Join(file, "nope")}, "gordis: workspace:"},
		{"workspace is a file", Options{Workspace: file}, "is not a directory"},
		{"bad registry config", Options{Workspace: t.TempDir(), Registry: registry.Config{MaxParallel: -1}}, "gordis: plugin registry:"},
		{"bad tools config", Options{Workspace: t.TempDir(), Tools: toolfs.Config{ReadLimit: -1}}, "gordis: plugin toolfs:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, cleanup, err := Build(tc.opts)
			if err == nil {
				cleanup()
				t.Fatalf("Build = %v, want an error", d)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
			if d != nil || cleanup != nil {
				t.Errorf("Build returned a deployment or cleanup with its error")
			}
		})
	}
}

// Deployments share nothing: several boot, work and close at once.
func TestBuildConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Go(func() {
			dir := t.TempDir()
			d, cleanup, err := Build(Options{Workspace: dir, NoPolicy: i%2 == 1})
			if err != nil {
				errs <- err
				return
			}
			defer cleanup()
			args := json.RawMessage(`{"file_path":"a.txt","content":"x"}`)
			if res := d.Tools.Execute(context.Background(), &registry.Call{Tool: "write", Args: args, Session: newSession(dir)}); res.IsError {
				errs <- errors.New(res.Text)
			}
			if got := len(d.Tools.Definitions()); got != 6 {
				errs <- fmt.Errorf("%d tools, want 6", got)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// BenchmarkBuild measures a whole boot and teardown of the default
// deployment: what a host pays per deployment (a test, a replay run).
func BenchmarkBuild(b *testing.B) {
	opts := Options{Workspace: b.TempDir()}
	b.ReportAllocs()
	for b.Loop() {
		_, cleanup, err := Build(opts)
		if err != nil {
			b.Fatal(err)
		}
		cleanup()
	}
}

// gordis.yaml is the default deployment: the same tools, descriptions and
// prompt as Build with no file.
func TestBuildFromTheDefaultFile(t *testing.T) {
	dir := t.TempDir()
	want := build(t, Options{Workspace: dir})
	got := build(t, Options{Workspace: dir, Config: "gordis.yaml"})
	if !reflect.DeepEqual(got.Tools.Definitions(), want.Tools.Definitions()) {
		t.Errorf("tools from gordis.yaml = %q, want %q", toolNames(got.Tools), toolNames(want.Tools))
	}
	if g, w := got.Prompt.Assemble(), want.Prompt.Assemble(); g != w {
		t.Errorf("prompt from gordis.yaml:\n%s\nwant:\n%s", g, w)
	}
	if got.Workspace != dir || got.Loader == nil {
		t.Errorf("Workspace = %q, Loader = %v; want %q and a loader", got.Workspace, got.Loader, dir)
	}
	// The policy is on: an edit needs a read first.
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := execute(t, got, newSession(dir), "edit", map[string]string{"file_path": "a.txt", "old_string": "old", "new_string": "new"})
	if res.Error == nil || res.Error.Code != "FS_NOT_OBSERVED" {
		t.Errorf("edit without a read = %q (%+v), want FS_NOT_OBSERVED", res.Text, res.Error)
	}
}

// Without Workspace, a file's deployment works in its fslocal cwd; with
// it, and with Unconfined and Roots, the options win over the file, also
// after a reload.
func TestBuildFileOptionsWin(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fileWS, flagWS, docs := filepath.Join(base, "file"), filepath.Join(base, "flag"), filepath.Join(base, "docs")
	for _, d := range []string{fileWS, flagWS, docs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(base, "gordis.yaml")
	text := "- {id: registry, name: registry}\n- {id: fs, name: fslocal, config: {cwd: " + fileWS + "}}\n- {id: tools, name: toolfs, config: {readLimit: 1}}\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := build(t, Options{Config: conf}); d.Workspace != fileWS {
		t.Errorf("Workspace = %q, want the file's cwd %q", d.Workspace, fileWS)
	}

	d := build(t, Options{Config: conf, Workspace: flagWS, Roots: []fslocal.Root{{Path: docs, ReadOnly: true}}})
	if d.Workspace != flagWS {
		t.Errorf("Workspace = %q, want the option's %q", d.Workspace, flagWS)
	}
	if err := os.WriteFile(filepath.Join(docs, "a.md"), []byte("1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		res := execute(t, d, newSession(flagWS), "read", map[string]string{"file_path": "../docs/a.md"})
		return res.Text
	}
	if got := read(); !strings.Contains(got, "1: 1\n") || strings.Contains(got, "2: 2") {
		t.Errorf("read with readLimit 1 = %q", got)
	}
	// A reload that raises readLimit keeps the options' workspace and roots.
	if err := os.WriteFile(conf, []byte(strings.Replace(text, "readLimit: 1", "readLimit: 5", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.Loader.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := read(); !strings.Contains(got, "2: 2") {
		t.Errorf("read after the reload = %q, want both lines", got)
	}
	res := execute(t, d, newSession(flagWS), "write", map[string]string{"file_path": "../docs/a.md", "content": "x"})
	if res.Error == nil || res.Error.Code != "FS_SANDBOX_DENIED" {
		t.Errorf("write into the read-only root after the reload = %q, want FS_SANDBOX_DENIED", res.Text)
	}
}

func TestBuildFileErrors(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "gordis.yaml")
	for _, tc := range []struct {
		name, file string
		opts       Options
		want       string
	}{
		{"no registry", "- {id: fs, name: fslocal}\n", Options{}, `gordis: ` + conf + `: a deployment needs the "tools" and "prompt" services, which a registry entry provides (gordis: plugin gordis: PENDING, not active)`},
		{"invalid entry", "- {id: tools, name: toolfs, config: {readLimit: 0}}\n", Options{}, conf + `:1:49: entry "tools" (toolfs): "readLimit" must be a positive integer`},
		{"unknown plugin", "- {id: x, name: fslocl}\n", Options{}, `unknown plugin "fslocl" (did you mean "fslocal"?)`},
		{"no policy", "[]\n", Options{NoPolicy: true}, "set in the file (disable the fspolicy entry for no policy)"},
		{"apply fails", "- {id: registry, name: registry}\n- {id: fs, name: fslocal, config: {cwd: " + dir + "/nope}}\n", Options{}, conf + `:2:35: entry "fs" (fslocal): fslocal: workspace: lstat ` + dir + `/nope: no such file or directory`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(conf, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			tc.opts.Config = conf
			d, cleanup, err := Build(tc.opts)
			if err == nil {
				cleanup()
				t.Fatalf("Build = %v, want an error", d)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
