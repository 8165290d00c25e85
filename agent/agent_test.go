package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/agent/deepseek"
	"github.com/gordis-run/gordis/agent/inproc"
	"github.com/gordis-run/gordis/agent/scripted"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// fixture is a real runtime and registry with small in-memory tools, and the
// scripted server over httptest behind the real DeepSeek adapter.
type fixture struct {
	rt     *runtime.Context
	tools  *registry.Registry
	prompt *registry.Prompt
	server *scripted.Handler
	model  *deepseek.Model

	mu     sync.Mutex
	notes  string
	events []string

	blockStarted chan struct{} // closed when the "block" tool starts
	listed       chan struct{} // closed when the "list" tool first runs
	listOnce     sync.Once
}

func newFixture(t testing.TB, script []scripted.Step, cfg deepseek.Config) (*fixture, *agent.Agent) {
	t.Helper()
	rt := runtime.New()
	t.Cleanup(func() { rt.Close() })
	f := &fixture{rt: rt, notes: "# Notes\nstatus: draft\n", server: scripted.New(script), blockStarted: make(chan struct{}), listed: make(chan struct{})}
	runtimetest.Plug(t, rt, registry.Plugin, registry.Config{})
	var ok1, ok2 bool
	f.tools, ok1 = registry.Tools.Lookup(rt)
	f.prompt, ok2 = registry.Prompts.Lookup(rt)
	if !ok1 || !ok2 {
		t.Fatal("registry services missing")
	}
	for _, tool := range f.testTools() {
		if err := f.tools.Register(rt, tool); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.prompt.Add(rt, registry.Section{Name: "test", Text: "You edit notes."}); err != nil {
		t.Fatal(err)
	}
	record := func(name string) {
		f.mu.Lock()
		f.events = append(f.events, name)
		f.mu.Unlock()
	}
	agent.TurnStartEvent.On(rt, func(agent.TurnStart) error { record("turn-start"); return nil })
	agent.StepStartEvent.On(rt, func(e agent.StepStart) error { record(fmt.Sprintf("step-start %d", e.Step)); return nil })
	agent.AssistantMessageEvent.On(rt, func(e agent.AssistantMessage) error { record("assistant " + string(e.Finish)); return nil })
	agent.ToolCallEvent.On(rt, func(e agent.ToolCallStart) error { record("tool-call " + e.Call.Tool); return nil })
	agent.ToolResultEvent.On(rt, func(e agent.ToolCallEnd) error { record("tool-result " + e.Result.Tool); return nil })
	agent.ErrorEvent.On(rt, func(e agent.StepError) error { record("error"); return nil })
	agent.TurnEndEvent.On(rt, func(e agent.TurnEnd) error { record("turn-end " + string(e.Reason)); return nil })

	cfg.APIKey, cfg.BaseURL, cfg.MaxRetryDelay = "test-key", "http://scripted.invalid", 5*time.Millisecond
	if cfg.HTTPClient == nil {
		srv := httptest.NewServer(f.server)
		t.Cleanup(srv.Close)
		cfg.BaseURL = srv.URL
	}
	f.server.APIKey = "test-key"
	model, err := deepseek.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.model = model
	return f, f.newAgent(t)
}

func (f *fixture) newAgent(t testing.TB) *agent.Agent {
	a, err := agent.New(f.rt, agent.Config{Model: f.model, Tools: f.tools, Prompt: f.prompt, Cwd: t.TempDir(), MaxSteps: 6})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func (f *fixture) testTools() []registry.Tool {
	obj := func(props string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
	}
	safe := func(json.RawMessage) bool { return true }
	type fileArgs struct {
		FilePath  string `json:"file_path"`
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	}
	return []registry.Tool{
		{Name: "list", Description: "List.", Parameters: obj(`"path":{"type":"string"}`), ConcurrencySafe: safe,
			Execute: func(context.Context, *registry.Call) (any, error) {
				f.listOnce.Do(func() { close(f.listed) })
				return "notes.md\nsrc/", nil
			}},
		{Name: "grep", Description: "Grep.", Parameters: obj(`"pattern":{"type":"string"}`), ConcurrencySafe: safe,
			Execute: func(_ context.Context, c *registry.Call) (any, error) {
				var a struct{ Pattern string }
				json.Unmarshal(c.Args, &a)
				f.mu.Lock()
				defer f.mu.Unlock()
				for i, line := range strings.Split(f.notes, "\n") {
					if strings.Contains(line, a.Pattern) {
						return fmt.Sprintf("Found 1 match\n\nnotes.md\nLine %d: %s", i+1, line), nil
					}
				}
				return "No matches found", nil
			}},
		{Name: "read", Description: "Read.", Parameters: obj(`"file_path":{"type":"string"}`), ConcurrencySafe: safe,
			Execute: func(_ context.Context, c *registry.Call) (any, error) {
				var a fileArgs
				json.Unmarshal(c.Args, &a)
				if a.FilePath == "slow.md" {
					// Finishes only after the next call ran: the two overlap.
					select {
					case <-f.listed:
						return "slow content", nil
					case <-time.After(5 * time.Second):
						return nil, errors.New("list did not run while slow.md was being read")
					}
				}
				f.mu.Lock()
				defer f.mu.Unlock()
				return f.notes, nil
			}},
		{Name: "edit", Description: "Edit.", Parameters: obj(`"file_path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"}`),
			Execute: func(_ context.Context, c *registry.Call) (any, error) {
				var a fileArgs
				json.Unmarshal(c.Args, &a)
				f.mu.Lock()
				defer f.mu.Unlock()
				if !strings.Contains(f.notes, a.OldString) {
					return nil, errors.New("old_string not found")
				}
				f.notes = strings.Replace(f.notes, a.OldString, a.NewString, 1)
				return "The file notes.md has been updated successfully.", nil
			}},
		{Name: "quiet", Description: "Says nothing.", Parameters: obj(""),
			Execute: func(context.Context, *registry.Call) (any, error) { return "", nil }},
		{Name: "block", Description: "Waits for cancellation.", Parameters: obj(""),
			Execute: func(ctx context.Context, _ *registry.Call) (any, error) {
				close(f.blockStarted)
				<-ctx.Done()
				return "stopped", nil
			}},
	}
}

func (f *fixture) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.events...)
}

func TestScriptedTurn(t *testing.T) {
	for _, noStream := range []bool{false, true} {
		t.Run(fmt.Sprintf("noStream=%v", noStream), func(t *testing.T) {
			f, a := newFixture(t, nil, deepseek.Config{NoStream: noStream})
			streamed := map[int]*agent.Delta{} // by step
			agent.AssistantDeltaEvent.On(f.rt, func(e agent.AssistantDelta) error {
				if streamed[e.Step] == nil {
					streamed[e.Step] = &agent.Delta{}
				}
				streamed[e.Step].Reasoning += e.Reasoning
				streamed[e.Step].Text += e.Text
				return nil
			})
			end, err := a.Run(context.Background(), scripted.Prompt)
			if err != nil {
				t.Fatal(err)
			}
			// Streamed pieces add up to the messages; a whole reply has none.
			switch {
			case noStream && len(streamed) != 0:
				t.Errorf("deltas without streaming: %v", streamed)
			case !noStream && (len(streamed) != 4 || streamed[1].Reasoning != "I'll look at the workspace first." ||
				streamed[2].Reasoning != "Which files are still drafts?" ||
				streamed[4].Reasoning != "The notes are still a draft; mark them reviewed." || streamed[6].Text != end.Answer):
				t.Errorf("deltas %v", streamed)
			}
			if end.Reason != agent.ReasonCompleted || end.Steps != 6 || end.Answer != "Updated notes.md: status is now reviewed." {
				t.Fatalf("end %+v", end)
			}
			if end.Usage.Input == 0 || end.Usage.CacheRead == 0 || end.Usage.Output == 0 {
				t.Errorf("usage %+v", end.Usage)
			}
			if f.notes != "# Notes\nstatus: reviewed\n" {
				t.Errorf("notes %q", f.notes)
			}
			want := []string{"turn-start"}
			for i, tool := range []string{"list", "grep", "read", "edit", "read"} {
				want = append(want, fmt.Sprintf("step-start %d", i+1), "assistant tool_calls", "tool-call "+tool, "tool-result "+tool)
			}
			want = append(want, "step-start 6", "assistant stop", "turn-end completed")
			if got := f.log(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("events\n got %v\nwant %v", got, want)
			}
			// The reasoning passback rule: every tool-call turn kept its
			// reasoning (the server rejects the next request otherwise).
			h := a.History()
			if len(h) != 12 || h[1].Reasoning == nil || *h[1].Reasoning != "I'll look at the workspace first." || h[5].Reasoning == nil || *h[5].Reasoning != "" {
				t.Errorf("history %+v", h)
			}
		})
	}
}

func TestParallelResultsInModelOrder(t *testing.T) {
	script := []scripted.Step{
		{Calls: []scripted.Call{
			{Name: "read", Args: json.RawMessage(`{"file_path":"slow.md"}`)},
			{Name: "list", Args: json.RawMessage(`{}`)},
			{Name: "quiet"},
		}},
		{Expect: "slow content\nnotes.md\nsrc/\n(no output)\n", Text: "ok"},
	}
	_, a := newFixture(t, script, deepseek.Config{})
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range a.History() {
		if m.Role == agent.RoleTool {
			ids = append(ids, m.ToolCallID)
		}
	}
	if fmt.Sprint(ids) != "[call_0_0 call_0_1 call_0_2]" {
		t.Fatalf("tool messages %v", ids)
	}
}

func TestRateLimitThenSuccess(t *testing.T) {
	f, a := newFixture(t, nil, deepseek.Config{MaxRetries: 2})
	f.server.Inject(scripted.Fault{Status: 429, RetryAfter: "0"})
	end, err := a.Run(context.Background(), scripted.Prompt)
	if err != nil || end.Reason != agent.ReasonCompleted {
		t.Fatalf("end %+v, err %v", end, err)
	}
	if f.server.Requests() != 7 {
		t.Fatalf("requests %d, want 7 (one retried)", f.server.Requests())
	}
}

func TestTurnErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*fixture)
		code  string
	}{
		{"401", func(f *fixture) { f.server.APIKey = "another" }, agent.CodeAuth},
		{"stream cut before finish", func(f *fixture) { f.server.Inject(scripted.Fault{}, scripted.Fault{Truncate: true}) }, agent.CodeStreamClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, a := newFixture(t, nil, deepseek.Config{MaxRetries: 2})
			tt.setup(f)
			end, err := a.Run(context.Background(), scripted.Prompt)
			if !errors.Is(err, &agent.ModelError{Code: tt.code}) || end.Reason != agent.ReasonError || end.Error == "" {
				t.Fatalf("end %+v, err %v", end, err)
			}
			if log := f.log(); log[len(log)-2] != "error" || log[len(log)-1] != "turn-end error" {
				t.Fatalf("events %v", log)
			}
			// The failed step left no partial message behind.
			if h := a.History(); h[len(h)-1].Role == agent.RoleAssistant && len(h[len(h)-1].ToolCalls) > 0 {
				t.Fatalf("history ends with an unanswered assistant message")
			}
		})
	}
}

func TestMaxStepsGuard(t *testing.T) {
	var script []scripted.Step
	for range 20 {
		script = append(script, scripted.Step{Calls: []scripted.Call{{Name: "list"}}})
	}
	f, a := newFixture(t, script, deepseek.Config{})
	end, err := a.Run(context.Background(), "loop")
	if err != nil || end.Reason != agent.ReasonMaxSteps || end.Steps != 6 || f.server.Requests() != 6 {
		t.Fatalf("end %+v, err %v, requests %d", end, err, f.server.Requests())
	}
	// The history stays valid: a second turn is accepted by the server.
	f.server.Script = []scripted.Step{{Text: "done"}}
	if end, err := a.Run(context.Background(), "stop"); err != nil || end.Answer != "done" {
		t.Fatalf("second turn %+v, %v", end, err)
	}
}

func TestCancelMidBatch(t *testing.T) {
	script := []scripted.Step{
		{Calls: []scripted.Call{{Name: "block"}, {Name: "list"}}},
		{Text: "after"},
	}
	f, a := newFixture(t, script, deepseek.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-f.blockStarted
		cancel()
	}()
	end, err := a.Run(ctx, "go")
	if !errors.Is(err, context.Canceled) || end.Reason != agent.ReasonAborted {
		t.Fatalf("end %+v, err %v", end, err)
	}
	h := a.History()
	if len(h) != 4 || h[2].ToolCallID != "call_0_0" || !strings.Contains(h[2].Text, "aborted") || !strings.Contains(h[3].Text, "aborted before dispatch") {
		t.Fatalf("history %+v", h)
	}
	if f.server.Requests() != 1 {
		t.Fatalf("requests %d", f.server.Requests())
	}
	// The next turn carries the paired, synthetic results and is accepted.
	f.server.Script = []scripted.Step{{Text: "resumed"}}
	if end, err := a.Run(context.Background(), "again"); err != nil || end.Answer != "resumed" {
		t.Fatalf("next turn %+v, %v", end, err)
	}
}

func TestCancelDuringModelCall(t *testing.T) {
	f, a := newFixture(t, nil, deepseek.Config{})
	f.server.Inject(scripted.Fault{Stall: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	end, err := a.Run(ctx, scripted.Prompt)
	if !errors.Is(err, context.DeadlineExceeded) || end.Reason != agent.ReasonAborted || end.Steps != 1 {
		t.Fatalf("end %+v, err %v", end, err)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := agent.New(nil, agent.Config{}); err == nil {
		t.Fatal("want an error")
	}
}

// BenchmarkScriptedTurn is one demo turn end to end (six model calls over
// the in-process transport, SSE, the registry, the loop), minus real I/O.
func BenchmarkScriptedTurn(b *testing.B) {
	tr := &inproc.Transport{}
	f, _ := newFixture(b, nil, deepseek.Config{HTTPClient: &http.Client{Transport: tr}})
	tr.Handler = f.server
	b.ReportAllocs()
	for b.Loop() {
		f.notes = "# Notes\nstatus: draft\n"
		a, _ := agent.New(f.rt, agent.Config{Model: f.model, Tools: f.tools, Prompt: f.prompt})
		if end, err := a.Run(context.Background(), scripted.Prompt); err != nil || end.Steps != 6 {
			b.Fatal(end, err)
		}
	}
}

// BenchmarkScriptedTurnRealTools is the keyless demo's turn on the default
// deployment: the real list/grep/read/edit tools on a temporary directory,
// the read-before-write policy, atomic writes.
func BenchmarkScriptedTurnRealTools(b *testing.B) {
	dir := b.TempDir()
	notes := filepath.Join(dir, "notes.md")
	d, cleanup, err := gordis.Build(gordis.Options{Workspace: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup()
	model, err := deepseek.New(deepseek.Config{
		APIKey: "offline", BaseURL: "http://scripted.invalid",
		HTTPClient: &http.Client{Transport: inproc.Transport{Handler: scripted.New(nil)}},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := os.WriteFile(notes, []byte("# Notes\nstatus: draft\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		a, _ := agent.New(d.Root, agent.Config{Model: model, Tools: d.Tools, Prompt: d.Prompt, Cwd: d.Workspace})
		if end, err := a.Run(context.Background(), scripted.Prompt); err != nil || end.Steps != 6 {
			b.Fatal(end, err)
		}
		a.Close()
	}
}

// No agent lock is held while listeners run: one may read the history (it
// would deadlock otherwise), and it sees each result as soon as it is in.
func TestListenersMayReadHistory(t *testing.T) {
	f, a := newFixture(t, nil, deepseek.Config{})
	var lens []int
	agent.ToolResultEvent.On(f.rt, func(agent.ToolCallEnd) error {
		lens = append(lens, len(a.History()))
		return nil
	})
	if _, err := a.Run(context.Background(), scripted.Prompt); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(lens) != "[3 5 7 9 11]" {
		t.Fatalf("history lengths %v", lens)
	}
}

// A length finish in the middle of the tool-call arguments leaves no text:
// nothing enters the history, so the next turn's request stays valid.
func TestLengthFinishWithNothingLeft(t *testing.T) {
	script := []scripted.Step{{Calls: []scripted.Call{{Name: "list"}}, Finish: "length"}}
	f, a := newFixture(t, script, deepseek.Config{})
	if end, err := a.Run(context.Background(), "go"); err != nil || end.Reason != agent.ReasonMaxTokens {
		t.Fatalf("end %+v, err %v", end, err)
	}
	f.server.Script = []scripted.Step{{Text: "fine"}}
	if end, err := a.Run(context.Background(), "again"); err != nil || end.Answer != "fine" {
		t.Fatalf("next turn %+v, %v", end, err)
	}
}

// finish_reason "length": the message may be cut, so its tool calls are
// dropped, never run, and the turn ends with max-tokens.
func TestLengthFinishDropsToolCalls(t *testing.T) {
	script := []scripted.Step{{Text: "I will list", Calls: []scripted.Call{{Name: "list"}}, Finish: "length"}}
	f, a := newFixture(t, script, deepseek.Config{})
	end, err := a.Run(context.Background(), "go")
	if err != nil || end.Reason != agent.ReasonMaxTokens || end.Steps != 1 || end.Answer != "I will list" {
		t.Fatalf("end %+v, err %v", end, err)
	}
	h := a.History()
	if len(h) != 2 || len(h[1].ToolCalls) != 0 {
		t.Fatalf("history %+v", h)
	}
	for _, e := range f.log() {
		if strings.HasPrefix(e, "tool-call") {
			t.Fatalf("a tool ran: %v", f.log())
		}
	}
}
