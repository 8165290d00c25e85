package wordcount_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/examples/protect"
	"github.com/gordis-run/gordis/examples/wordcount"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// stack is the default deployment with the plugin on top, in a temporary
// workspace, and a session rooted there.
type stack struct {
	*gordis.Deployment
	fiber   *runtime.Fiber
	session *agent.Session
}

func newStack(t *testing.T) *stack {
	t.Helper()
	d, cleanup, err := gordis.Build(gordis.Options{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	f := runtimetest.Plug(t, d.Root, wordcount.Plugin, nil)
	s := agent.NewSession(d.Workspace)
	t.Cleanup(s.Close)
	return &stack{d, f, s}
}

func (s *stack) file(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(s.Workspace, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (s *stack) call(tool string, args any) *registry.Call {
	raw, _ := json.Marshal(args)
	return &registry.Call{ID: tool, Tool: tool, Args: raw, Session: s.session}
}

func (s *stack) run(tool string, args any) *registry.Result {
	return s.Tools.Execute(context.Background(), s.call(tool, args))
}

func TestRegisters(t *testing.T) {
	s := newStack(t)
	var names []string
	for _, d := range s.Tools.Definitions() {
		names = append(names, d.Name)
	}
	if want := []string{"list", "read", "write", "edit", "glob", "grep", "count"}; !slices.Equal(names, want) {
		t.Errorf("tools = %q, want %q", names, want)
	}
	if !strings.Contains(s.Prompt.Assemble(), wordcount.Guidance) {
		t.Errorf("the prompt lacks the count guidance")
	}
	// Disposing the plugin takes its tool and section away.
	if err := s.fiber.Dispose(); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Tools.Definitions()); n != 6 {
		t.Errorf("%d tools after dispose, want 6", n)
	}
	if strings.Contains(s.Prompt.Assemble(), wordcount.Guidance) {
		t.Errorf("the count guidance outlived the plugin")
	}
}

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		name, content, text string
		lines, words, bytes int64
	}{
		{"empty", "", "0 lines, 0 words, 0 bytes", 0, 0, 0},
		{"one line", "one\n", "1 line, 1 word, 4 bytes", 1, 1, 4},
		{"no final newline", "a b\nc", "2 lines, 3 words, 5 bytes", 2, 3, 5},
		{"blank lines", "\n\n\n", "3 lines, 0 words, 3 bytes", 3, 0, 3},
		{"crlf and tabs", "a\tb\r\nc  d\r\n", "2 lines, 4 words, 11 bytes", 2, 4, 11},
		{"multibyte", "héllo wörld\n", "1 line, 2 words, 14 bytes", 1, 2, 14},
		{"unicode spaces", "a\u00a0b\u2003c\u3000d", "1 line, 4 words, 12 bytes", 1, 4, 12},
		{"bom hidden", "\ufeffhi\n", "1 line, 1 word, 3 bytes", 1, 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStack(t)
			s.file(t, "f.txt", tc.content)
			res := s.run("count", map[string]string{"file_path": "f.txt"})
			if res.IsError {
				t.Fatalf("count: %s", res.Text)
			}
			path := filepath.Join(s.Workspace, "f.txt")
			if want := path + ": " + tc.text; res.Text != want {
				t.Errorf("text = %q, want %q", res.Text, want)
			}
			want := &wordcount.Counts{Path: path, Lines: tc.lines, Words: tc.words, Bytes: tc.bytes}
			if got, _ := res.Value.(*wordcount.Counts); got == nil || *got != *want {
				t.Errorf("value = %+v, want %+v", res.Value, want)
			}
		})
	}
}

// A file larger than the provider's stream buffer, with runes straddling
// every buffer boundary.
func TestCountLargeFile(t *testing.T) {
	s := newStack(t)
	line := strings.Repeat("é€😀 ", 1000) + "\n" // 10 000 bytes, 4 000 words
	s.file(t, "big.txt", strings.Repeat(line, 100))
	res := s.run("count", map[string]string{"file_path": "big.txt"})
	want := &wordcount.Counts{Path: filepath.Join(s.Workspace, "big.txt"), Lines: 100, Words: 100_000, Bytes: 1_000_100}
	if got, _ := res.Value.(*wordcount.Counts); got == nil || *got != *want {
		t.Errorf("value = %+v (%s), want %+v", res.Value, res.Text, want)
	}
}

func TestCountErrors(t *testing.T) {
	s := newStack(t)
	s.file(t, "bin", "a\x00b")
	if err := os.Mkdir(filepath.Join(s.Workspace, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws := s.Workspace
	for _, tc := range []struct {
		args       any
		text, code string
	}{
		{map[string]string{"file_path": "missing.txt"}, `Error: cannot read "` + ws + `/missing.txt": not found`, "FS_NOT_FOUND"},
		{map[string]string{"file_path": "dir"}, `Error: cannot read "` + ws + `/dir": not a regular file`, "FS_NOT_REGULAR_FILE"},
		{map[string]string{"file_path": "bin"}, `Error: cannot read "` + ws + `/bin": binary file`, "FS_NOT_TEXT"},
		{map[string]any{}, `Error: invalid arguments: missing required property "file_path"`, "INVALID_ARGS"},
	} {
		res := s.run("count", tc.args)
		if !res.IsError || res.Text != tc.text || res.Error.Code != tc.code {
			t.Errorf("count %v = %q (%+v), want %q with %s", tc.args, res.Text, res.Error, tc.text, tc.code)
		}
	}
}

// Counting shows no content, so it does not satisfy read-before-edit.
func TestCountIsNotARead(t *testing.T) {
	s := newStack(t)
	s.file(t, "a.txt", "old\n")
	if res := s.run("count", map[string]string{"file_path": "a.txt"}); res.IsError {
		t.Fatal(res.Text)
	}
	res := s.run("edit", map[string]string{"file_path": "a.txt", "old_string": "old", "new_string": "new"})
	if !res.IsError || res.Error.Code != "FS_NOT_OBSERVED" {
		t.Errorf("edit after count = %q, want FS_NOT_OBSERVED", res.Text)
	}
}

// Counts are concurrency-safe: a batch runs them side by side, each with
// its own result, in order.
func TestCountBatch(t *testing.T) {
	s := newStack(t)
	var calls []*registry.Call
	for i := range 8 {
		name := "f" + string(rune('0'+i)) + ".txt"
		s.file(t, name, strings.Repeat("w ", i))
		calls = append(calls, s.call("count", map[string]string{"file_path": name}))
	}
	for i, res := range s.Tools.ExecuteBatch(context.Background(), calls) {
		if got, _ := res.Value.(*wordcount.Counts); got == nil || got.Words != int64(i) {
			t.Errorf("call %d = %q, want %d words", i, res.Text, i)
		}
	}
}

// TestPassesProtect: count says it only reads, so the protect guard,
// which refuses a tool that does not say what it changes, lets it run.
func TestPassesProtect(t *testing.T) {
	s := newStack(t)
	runtimetest.Plug(t, s.Root, protect.Plugin, protect.Config{Patterns: []string{".env"}})
	s.file(t, "a.txt", "one two\n")
	if res := s.run("count", map[string]string{"file_path": "a.txt"}); res.IsError {
		t.Fatalf("count under protect: %s", res.Text)
	}
}
