package protect_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/examples/protect"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// stack is the default deployment over a workspace holding .env,
// config/prod/app.yml and notes.txt, with a session rooted in the
// workspace.
type stack struct {
	*gordis.Deployment
	session *agent.Session
}

func newStack(t *testing.T) *stack {
	t.Helper()
	d, cleanup, err := gordis.Build(gordis.Options{Workspace: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}) // the config tests log their failures
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	s := &stack{Deployment: d, session: agent.NewSession(d.Workspace)}
	t.Cleanup(s.session.Close)
	for name, content := range map[string]string{".env": "KEY=1\n", "config/prod/app.yml": "a: 1\n", "notes.txt": "notes\n"} {
		s.file(t, name, content)
	}
	return s
}

func (s *stack) file(t *testing.T, name, content string) {
	t.Helper()
	p := filepath.Join(s.Workspace, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (s *stack) plug(t *testing.T, config any) *runtime.Fiber {
	t.Helper()
	f, err := s.Root.Plugin(protect.Plugin, config)
	if err == nil {
		err = f.Wait()
	}
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (s *stack) run(tool string, args any) *registry.Result {
	raw, _ := json.Marshal(args)
	return s.Tools.Execute(context.Background(), &registry.Call{ID: tool, Tool: tool, Args: raw, Session: s.session})
}

var config = protect.Config{Patterns: []string{".env", "*.lock", "config/prod"}}

func write(path string) map[string]string {
	return map[string]string{"file_path": path, "content": "new\n"}
}

func TestDeniesProtected(t *testing.T) {
	s := newStack(t)
	s.plug(t, config)
	ws := s.Workspace
	if err := os.Symlink(".env", filepath.Join(ws, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, tool string
		args       map[string]string
		path, by   string
	}{
		{"file name", "write", write(".env"), ws + "/.env", ".env"},
		{"in a subdirectory", "write", write("app/.env"), ws + "/app/.env", ".env"},
		{"glob", "write", write("go.lock"), ws + "/go.lock", "*.lock"},
		{"inside a protected directory", "edit", map[string]string{"file_path": "config/prod/app.yml", "old_string": "1", "new_string": "2"}, ws + "/config/prod/app.yml", "config/prod"},
		{"dot-dot", "write", write("notes/../.env"), ws + "/.env", ".env"},
		{"absolute", "write", write(ws + "/.env"), ws + "/.env", ".env"},
		{"symlink to a protected file", "write", write("innocent.txt"), ws + "/innocent.txt", ".env"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := s.run(tc.tool, tc.args)
			reason := `cannot ` + tc.tool + ` "` + tc.path + `": it is protected by the pattern "` + tc.by + `"`
			if want := (registry.ErrorInfo{Message: reason, Name: "ToolDenied", Code: "TOOL_DENIED"}); res.Text != "Error: "+reason || res.Error == nil || *res.Error != want {
				t.Errorf("got %q %+v\nwant %q", res.Text, res.Error, "Error: "+reason)
			}
		})
	}
	for name, want := range map[string]string{".env": "KEY=1\n", "config/prod/app.yml": "a: 1\n"} {
		if b, _ := os.ReadFile(filepath.Join(ws, name)); string(b) != want {
			t.Errorf("%s = %q: a denied call ran", name, b)
		}
	}
	for _, name := range []string{"app/.env", "go.lock"} {
		if _, err := os.Stat(filepath.Join(ws, name)); !os.IsNotExist(err) {
			t.Errorf("a denied write created %s: %v", name, err)
		}
	}
}

func TestAllowsTheRest(t *testing.T) {
	s := newStack(t)
	s.plug(t, config)
	for _, step := range []struct {
		tool string
		args map[string]string
	}{
		{"write", write("todo.txt")},
		{"write", write("env.txt")},               // ".env" is a whole element, not a suffix
		{"write", write("lib/config/prod/x.yml")}, // a pattern with a slash starts at the workspace
		{"write", write(".envrc")},
		{"edit", map[string]string{"file_path": "todo.txt", "old_string": "new", "new_string": "newer"}},
		{"read", map[string]string{"file_path": ".env"}}, // read-only tools pass
		{"list", map[string]string{"path": "config/prod"}},
	} {
		if res := s.run(step.tool, step.args); res.IsError {
			t.Errorf("%s %v: %s", step.tool, step.args, res.Text)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(s.Workspace, "todo.txt")); string(b) != "newer\n" {
		t.Errorf("todo.txt = %q", b)
	}
}

// The rule reads traits, not tool names: a tool it has never heard of is
// checked by the arguments it declares as paths, unless it is read-only.
func TestUsesTraits(t *testing.T) {
	s := newStack(t)
	s.plug(t, config)
	type moveArgs struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
	for _, readOnly := range []bool{false, true} {
		name := map[bool]string{false: "move", true: "diff"}[readOnly]
		tool, err := registry.Define(name, "", func(context.Context, *registry.Call, moveArgs) (string, error) { return "done", nil }, nil)
		if err != nil {
			t.Fatal(err)
		}
		tool.Traits = registry.Traits{ReadOnly: readOnly, Paths: []string{"from", "to"}}
		f, err := s.Root.Plugin(runtime.Func(name, func(ctx *runtime.Context) error { return s.Tools.Register(ctx, tool) }), nil)
		if err == nil {
			err = f.Wait()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	res := s.run("move", map[string]string{"from": "notes.txt", "to": "x/.env"})
	if want := `Error: cannot move "` + s.Workspace + `/x/.env": it is protected by the pattern ".env"`; res.Text != want {
		t.Errorf("move: %q, want %q", res.Text, want)
	}
	// The key the rule reads is the key the tool decodes: exact case.
	if res := s.run("move", map[string]string{"from": "notes.txt", "to": "a.txt", "TO": ".env"}); res.IsError {
		t.Errorf("move with a case variant: %s", res.Text)
	}
	if res := s.run("diff", map[string]string{"from": ".env", "to": "go.lock"}); res.IsError {
		t.Errorf("read-only diff: %s", res.Text)
	}
}

// The rule is prepended: a permission plugin plugged earlier that allows
// everything does not get to decide first.
func TestRunsBeforeEarlierPermissions(t *testing.T) {
	s := newStack(t)
	allowAll := runtime.Func("allow-all", func(ctx *runtime.Context) error {
		_, err := registry.PreExecute.On(ctx, func(*registry.Request, runtime.Next[registry.Decision]) (registry.Decision, error) {
			return registry.Decision{}, nil
		})
		return err
	})
	if _, err := s.Root.Plugin(allowAll, nil); err != nil {
		t.Fatal(err)
	}
	s.plug(t, config)
	if res := s.run("write", write(".env")); res.Error == nil || res.Error.Code != "TOOL_DENIED" {
		t.Errorf("write .env = %q, want a denial", res.Text)
	}
}

func TestPromptAndDispose(t *testing.T) {
	s := newStack(t)
	f := s.plug(t, config)
	want := "These files are protected: .env, *.lock, config/prod. Calls that would change them are refused; leave them as they are."
	if !strings.Contains(s.Prompt.Assemble(), want) {
		t.Errorf("prompt lacks %q:\n%s", want, s.Prompt.Assemble())
	}
	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s.Prompt.Assemble(), want) {
		t.Errorf("the protect section outlived the plugin")
	}
	if res := s.run("write", write("go.lock")); res.IsError {
		t.Errorf("write after dispose: %s", res.Text)
	}
}

func TestConfig(t *testing.T) {
	s := newStack(t)
	for _, tc := range []struct {
		name   string
		config any
		want   string
	}{
		{"missing patterns", nil, "patterns"},
		{"no patterns", protect.Config{Patterns: []string{}}, `"patterns" must have at least 1 item`},
		{"bad pattern", protect.Config{Patterns: []string{"[a"}}, `protect: pattern "[a": want a relative path pattern`},
		{"absolute pattern", protect.Config{Patterns: []string{"/etc/*"}}, `protect: pattern "/etc/*": want a relative path pattern`},
		{"the workspace itself", protect.Config{Patterns: []string{"./"}}, `protect: pattern ".": want a relative path pattern`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := s.Root.Plugin(protect.Plugin, tc.config)
			if err == nil {
				err = f.Wait()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// A mutating tool that does not say which files it changes is refused,
// unless it claims to change none or AllowUnknownPaths is set.
func TestUnknownPaths(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config protect.Config
		traits registry.Traits
		want   string
	}{
		{"claims nothing", config, registry.Traits{}, "Error: cannot run: the tool does not say which files it changes, so it could change a protected file"},
		{"destructive", config, registry.Traits{Destructive: true}, "Error: cannot run: the tool does not say which files it changes, so it could change a protected file"},
		{"no files", config, registry.Traits{NoFiles: true}, "ran"},
		{"read-only", config, registry.Traits{ReadOnly: true}, "ran"},
		{"allowed", protect.Config{Patterns: config.Patterns, AllowUnknownPaths: true}, registry.Traits{}, "ran"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStack(t)
			s.plug(t, tc.config)
			tool := registry.Tool{Name: "run", Traits: tc.traits, Execute: func(context.Context, *registry.Call) (any, error) { return "ran", nil }}
			f, err := s.Root.Plugin(runtime.Func("run", func(ctx *runtime.Context) error { return s.Tools.Register(ctx, tool) }), nil)
			if err == nil {
				err = f.Wait()
			}
			if err != nil {
				t.Fatal(err)
			}
			if res := s.run("run", map[string]string{}); res.Text != tc.want {
				t.Errorf("run = %q, want %q", res.Text, tc.want)
			}
		})
	}
}
