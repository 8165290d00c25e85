package sandbox_test

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
	"github.com/gordis-run/gordis/examples/sandbox"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// stack is the default deployment over a workspace holding allowed/ and
// outside.txt, with a session rooted in the workspace.
type stack struct {
	*gordis.Deployment
	session *agent.Session
	allowed string
}

func newStack(t *testing.T) *stack {
	t.Helper()
	// Unconfined: the rule under test must be the only boundary, or the
	// provider would refuse the escapes before the rule sees them.
	d, cleanup, err := gordis.Build(gordis.Options{Workspace: t.TempDir(), Unconfined: true, Logger: slog.New(slog.DiscardHandler)}) // the config tests log their failures
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	s := &stack{Deployment: d, session: agent.NewSession(d.Workspace), allowed: filepath.Join(d.Workspace, "allowed")}
	t.Cleanup(s.session.Close)
	if err := os.Mkdir(s.allowed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.Workspace, "outside.txt"), []byte("out\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *stack) plug(t *testing.T, config any) *runtime.Fiber {
	t.Helper()
	f, err := s.Root.Plugin(sandbox.Plugin, config)
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

func write(path string) map[string]string {
	return map[string]string{"file_path": path, "content": "new\n"}
}

func TestDeniesOutside(t *testing.T) {
	s := newStack(t)
	s.plug(t, sandbox.Config{Root: "allowed"}) // relative to the workspace
	ws, other := s.Workspace, t.TempDir()
	if err := os.Symlink(other, filepath.Join(s.allowed, "escape")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, tool string
		args       map[string]string
		path       string
	}{
		{"workspace file", "write", write("outside.txt"), ws + "/outside.txt"},
		{"dot-dot", "write", write("allowed/../outside.txt"), ws + "/outside.txt"},
		{"absolute", "write", write(other + "/x.txt"), other + "/x.txt"},
		{"sibling prefix", "write", write("allowed-not/x.txt"), ws + "/allowed-not/x.txt"},
		{"symlink out", "write", write("allowed/escape/x.txt"), ws + "/allowed/escape/x.txt"},
		{"edit", "edit", map[string]string{"file_path": "outside.txt", "old_string": "out", "new_string": "in"}, ws + "/outside.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := s.run(tc.tool, tc.args)
			reason := `cannot ` + tc.tool + ` "` + tc.path + `": outside the writable folder "` + s.allowed + `"`
			if res.Text != "Error: "+reason {
				t.Errorf("text = %q, want %q", res.Text, "Error: "+reason)
			}
			if want := (registry.ErrorInfo{Message: reason, Name: "ToolDenied", Code: "TOOL_DENIED"}); res.Error == nil || *res.Error != want {
				t.Errorf("error = %+v, want %+v", res.Error, want)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "outside.txt")); string(b) != "out\n" {
		t.Errorf("outside.txt = %q: a denied call ran", b)
	}
	if _, err := os.Stat(filepath.Join(other, "x.txt")); !os.IsNotExist(err) {
		t.Errorf("a denied write created a file behind the symlink: %v", err)
	}
}

func TestAllowsInside(t *testing.T) {
	s := newStack(t)
	s.plug(t, sandbox.Config{Root: "allowed"})
	for _, step := range []struct {
		tool string
		args map[string]string
	}{
		{"write", write("allowed/a.txt")},
		{"write", write(filepath.Join(s.allowed, "sub-a.txt"))},
		{"edit", map[string]string{"file_path": "allowed/a.txt", "old_string": "new", "new_string": "newer"}},
		{"read", map[string]string{"file_path": "outside.txt"}}, // only write and edit are guarded
		{"list", map[string]string{"path": ".."}},
	} {
		if res := s.run(step.tool, step.args); res.IsError {
			t.Errorf("%s %v: %s", step.tool, step.args, res.Text)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(s.allowed, "a.txt")); string(b) != "newer\n" {
		t.Errorf("allowed/a.txt = %q", b)
	}
}

// The rule is prepended: a permission plugin plugged earlier that allows
// everything does not get to decide first.
func TestRunsBeforeEarlierPermissions(t *testing.T) {
	s := newStack(t)
	allowAll := runtime.Func("allow-all", func(ctx *runtime.Context) error {
		_, err := registry.PreExecute.On(ctx, func(*registry.Call, runtime.Next[registry.Decision]) (registry.Decision, error) {
			return registry.Decision{}, nil
		})
		return err
	})
	if _, err := s.Root.Plugin(allowAll, nil); err != nil {
		t.Fatal(err)
	}
	s.plug(t, sandbox.Config{Root: s.allowed})
	if res := s.run("write", write("outside.txt")); res.Error == nil || res.Error.Code != "TOOL_DENIED" {
		t.Errorf("write outside = %q, want a denial", res.Text)
	}
}

func TestPromptAndDispose(t *testing.T) {
	s := newStack(t)
	f := s.plug(t, sandbox.Config{Root: s.allowed})
	want := "The write and edit tools may only change files inside " + s.allowed + "; calls on other paths are refused."
	if !strings.Contains(s.Prompt.Assemble(), want) {
		t.Errorf("prompt lacks %q:\n%s", want, s.Prompt.Assemble())
	}
	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s.Prompt.Assemble(), want) {
		t.Errorf("the sandbox section outlived the plugin")
	}
	if res := s.run("write", write("elsewhere.txt")); res.IsError {
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
		{"missing root", nil, "root"},
		{"empty root", sandbox.Config{}, "root"},
		{"root is a file", sandbox.Config{Root: "outside.txt"}, `sandbox: root "` + s.Workspace + `/outside.txt" is not a directory`},
		{"root is missing", sandbox.Config{Root: "nope"}, `sandbox: root "` + s.Workspace + `/nope" is not a directory`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := s.Root.Plugin(sandbox.Plugin, tc.config)
			if err == nil {
				err = f.Wait()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// The rule resolves a path exactly as the tools do: a ".." from a workspace
// that is a symlink walks up from the workspace's real place, so a
// lexical check against the link's spelling would let this write escape.
func TestDeniesDotDotThroughSymlinkedWorkspace(t *testing.T) {
	s := newStack(t)
	s.plug(t, sandbox.Config{Root: "allowed"})
	other := t.TempDir()
	if err := os.Mkdir(filepath.Join(other, "ws"), 0o755); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(s.allowed, "ws")
	if err := os.Symlink(filepath.Join(other, "ws"), linked); err != nil {
		t.Fatal(err)
	}
	session := agent.NewSession(linked)
	t.Cleanup(session.Close)
	raw, _ := json.Marshal(write("../escaped.txt"))
	res := s.Tools.Execute(context.Background(), &registry.Call{ID: "w", Tool: "write", Args: raw, Session: session})
	reason := `cannot write "` + filepath.Join(other, "escaped.txt") + `": outside the writable folder "` + s.allowed + `"`
	if res.Text != "Error: "+reason {
		t.Errorf("text = %q, want %q", res.Text, "Error: "+reason)
	}
	if _, err := os.Stat(filepath.Join(other, "escaped.txt")); !os.IsNotExist(err) {
		t.Errorf("the write escaped the sandbox: %v", err)
	}
}
