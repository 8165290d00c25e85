package auditlog_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/examples/auditlog"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

type stack struct {
	*gordis.Deployment
	session *agent.Session
	log     string // the audit log's path, outside the workspace
}

func newStack(t *testing.T) *stack {
	t.Helper()
	d, cleanup, err := gordis.Build(gordis.Options{Workspace: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}) // the config tests log their failures
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	s := &stack{Deployment: d, session: agent.NewSession(d.Workspace), log: filepath.Join(t.TempDir(), "audit.jsonl")}
	t.Cleanup(s.session.Close)
	return s
}

func (s *stack) plug(t *testing.T) *runtime.Fiber {
	t.Helper()
	return runtimetest.Plug(t, s.Root, auditlog.Plugin, auditlog.Config{Path: s.log})
}

func (s *stack) run(id, tool, args string) {
	s.Tools.Execute(context.Background(), &registry.Call{ID: id, Tool: tool, Args: json.RawMessage(args), Session: s.session})
}

func (s *stack) entries(t *testing.T) []auditlog.Entry {
	t.Helper()
	s.Root.Flush() // every observation emitted so far has been delivered
	f, err := os.Open(s.log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []auditlog.Entry
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var e auditlog.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

func TestRecordsEveryCall(t *testing.T) {
	s := newStack(t)
	s.plug(t)
	if err := os.WriteFile(filepath.Join(s.Workspace, "old.txt"), []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.run("c1", "write", `{"file_path":"a.txt","content":"secret\n"}`)
	s.run("c2", "read", `{"file_path":"missing.txt"}`)
	s.run("c3", "edit", `{"file_path":"old.txt","old_string":"v1","new_string":"v2"}`)
	s.run("c4", "nope", `{}`)

	ws := s.Workspace
	want := []auditlog.Entry{
		{Call: "c1", Tool: "write"},
		{Call: "c2", Tool: "read", IsError: true, Code: "FS_NOT_FOUND", Message: `cannot read "` + ws + `/missing.txt": not found`},
		{Call: "c3", Tool: "edit", IsError: true, Code: "FS_NOT_OBSERVED", Message: `edit requires reading "` + ws + `/old.txt" first`},
		{Call: "c4", Tool: "nope", IsError: true, Code: "TOOL_NOT_FOUND", Message: `unknown tool "nope"`},
	}
	got := s.entries(t)
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(got), len(want), got)
	}
	for i, e := range got {
		if e.Time.IsZero() || (i > 0 && e.Time.Before(got[i-1].Time)) {
			t.Errorf("entry %d: time %v out of order", i, e.Time)
		}
		e.Time = want[i].Time
		if e != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, e, want[i])
		}
	}
	if b, _ := os.ReadFile(s.log); strings.Contains(string(b), "secret") {
		t.Errorf("the log holds file contents: %s", b)
	}
	if info, err := os.Stat(s.log); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("log mode = %v, %v; want 0600", info.Mode(), err)
	}
}

func TestAppends(t *testing.T) {
	s := newStack(t)
	if err := os.WriteFile(s.log, []byte(`{"call":"earlier","tool":"list","isError":false,"time":"2026-01-01T00:00:00Z"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.plug(t)
	s.run("c1", "list", `{}`)
	got := s.entries(t)
	if len(got) != 2 || got[0].Call != "earlier" || got[1].Call != "c1" {
		t.Errorf("entries = %+v, want the earlier one then c1", got)
	}
}

// Disposing the plugin while calls are running closes the log after
// recording every result emitted before the dispose; later results are
// dropped, never written to a closed file.
func TestDisposeWhileRunning(t *testing.T) {
	s := newStack(t)
	f := s.plug(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			s.run("busy", "list", `{}`)
		}
	}()
	s.run("last", "list", `{}`)
	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	got := s.entries(t)
	if !slices.ContainsFunc(got, func(e auditlog.Entry) bool { return e.Call == "last" }) {
		t.Errorf("the result emitted just before dispose was lost: %+v", got)
	}
	<-done
	s.run("after", "list", `{}`)
	if again := s.entries(t); len(again) != len(got) {
		t.Errorf("%d entries after dispose, then %d: the closed log was written", len(got), len(again))
	}
}

func TestConfigErrors(t *testing.T) {
	s := newStack(t)
	for _, tc := range []struct {
		name   string
		config any
		want   string
	}{
		{"missing path", nil, `missing required property "path"`},
		{"missing folder", auditlog.Config{Path: filepath.Join(s.log, "x", "audit.jsonl")}, "no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := s.Root.Plugin(auditlog.Plugin, tc.config)
			if err == nil {
				err = f.Wait()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
