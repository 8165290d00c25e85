package toolfs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/fslocal"
	"github.com/gordis-run/gordis/plugins/fspolicy"
	"github.com/gordis-run/gordis/plugins/toolfs"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// churnTally counts the outcomes of a churn run: the calls, the successes,
// the failures by code, the failures with a code churn alone must not
// produce (wrong), and the results whose report disagrees with the disk
// (mismatches).
type churnTally struct {
	mu                sync.Mutex
	calls, ok         int
	codes             map[string]int // "" for a failure without a code
	wrong, mismatches []string
}

// add counts r. Under churn alone a call succeeds, or says that the tool is
// away for a moment (TOOL_UNAVAILABLE): any other failure is the provider's
// handles pulled from under the call.
func (c *churnTally) add(r *registry.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if !r.IsError {
		c.ok++
		return
	}
	code := ""
	if r.Error != nil {
		code = r.Error.Code
	}
	c.codes[code]++
	if code != registry.CodeUnavailable {
		c.wrong = append(c.wrong, r.Text)
	}
}

func (c *churnTally) mismatch(format string, a ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mismatches = append(c.mismatches, fmt.Sprintf(format, a...))
}

// TestChurn restarts the local provider every 20 ms (the plugin disposed, so
// FS.Close runs while calls are in flight, and plugged again) while 12
// sessions read and edit a counter each and 2 more replace a 4 MiB file.
// After every call the file is read back from the disk: a success must have
// landed, a failure must have changed nothing (issue 16, item 2).
func TestChurn(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := runtimetest.New(t)
	runtimetest.Plug(t, root, registry.Plugin, nil)
	runtimetest.Plug(t, root, fspolicy.Plugin, nil)
	cfg := fslocal.Config{Cwd: dir}
	provider, err := root.Plugin(fslocal.Plugin, cfg)
	if err != nil {
		t.Fatal(err)
	}
	runtimetest.Plug(t, root, toolfs.Plugin, nil)
	tools, _ := registry.Tools.Lookup(root)

	stop := make(chan struct{})
	var restarts atomic.Int64
	restarter := make(chan struct{})
	go func() {
		defer close(restarter)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if err := provider.Dispose(); err != nil {
				t.Error(err)
				return
			}
			if provider, err = root.Plugin(fslocal.Plugin, cfg); err != nil {
				t.Error(err)
				return
			}
			restarts.Add(1)
		}
	}()

	var seq atomic.Int64
	call := func(s registry.Session, tool string, a args) *registry.Result {
		raw, _ := json.Marshal(a)
		return tools.Execute(context.Background(), &registry.Call{ID: fmt.Sprint(seq.Add(1)), Tool: tool, Args: raw, Session: s})
	}
	deadline := time.Now().Add(3 * time.Second)
	if testing.Short() {
		deadline = time.Now().Add(time.Second)
	}
	tally := &churnTally{codes: map[string]int{}}
	// A session reads until the read succeeds, as a model would, pausing
	// while the tool is away; false when the run is over first.
	readBack := func(s registry.Session, a args) bool {
		for time.Now().Before(deadline) {
			r := call(s, "read", a)
			tally.add(r)
			if !r.IsError {
				return true
			}
			time.Sleep(time.Millisecond)
		}
		return false
	}
	// A session changes one file from state n to n+1 (step), its bytes
	// "n=<n>\n" and pad, and reads it back from the disk after every call.
	var wg sync.WaitGroup
	session := func(name, pad string, step func(n int) (tool string, a args)) {
		content := func(n int) string { return fmt.Sprintf("n=%d\n", n) + pad }
		if err := os.WriteFile(name, []byte(content(0)), 0o644); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			s := newSession(dir)
			for n := 0; time.Now().Before(deadline); {
				if !readBack(s, args{"file_path": name, "limit": 1}) {
					return
				}
				tool, a := step(n)
				r := call(s, tool, a)
				tally.add(r)
				want := n
				if !r.IsError {
					want = n + 1
				}
				data, err := os.ReadFile(name)
				switch {
				case err != nil:
					tally.mismatch("%s: %v", name, err)
					return
				case string(data) != content(want):
					tally.mismatch("%s: %s of n=%d reported %q, the file starts %q", name, tool, n, r.Text, data[:min(len(data), 12)])
					if _, err := fmt.Sscanf(string(data), "n=%d\n", &n); err != nil {
						return
					}
				default:
					n = want
				}
			}
		})
	}
	for i := range 12 {
		name := filepath.Join(dir, fmt.Sprintf("counter%d.txt", i))
		session(name, "", func(n int) (string, args) {
			return "edit", args{"file_path": name, "old_string": fmt.Sprintf("n=%d\n", n), "new_string": fmt.Sprintf("n=%d\n", n+1)}
		})
	}
	pad := strings.Repeat("x", 1<<20)
	for i := range 2 {
		name := filepath.Join(dir, fmt.Sprintf("big%d.txt", i))
		session(name, pad, func(n int) (string, args) {
			return "write", args{"file_path": name, "content": fmt.Sprintf("n=%d\n", n+1) + pad}
		})
	}
	wg.Wait()
	close(stop)
	<-restarter
	if err := provider.Dispose(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d restarts, %d calls: %d succeeded, failures by code %v, %d with another code, %d mismatches",
		restarts.Load(), tally.calls, tally.ok, tally.codes, len(tally.wrong), len(tally.mismatches))
	for _, m := range tally.mismatches[:min(len(tally.mismatches), 10)] {
		t.Error("mismatch:", m)
	}
	for _, m := range tally.wrong[:min(len(tally.wrong), 10)] {
		t.Error("failure under churn alone:", m)
	}
	if restarts.Load() < 5 || tally.ok < 50 {
		t.Errorf("too little churn to judge: %d restarts, %d successes", restarts.Load(), tally.ok)
	}
}

// A provider that is closed (or closing) refuses the call before it does
// anything, and the registry says the tool is away for a moment.
func TestClosedProviderUnavailable(t *testing.T) {
	dir := t.TempDir()
	local, err := fslocal.Open(fslocal.Config{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := local.Close(); err != nil {
		t.Fatal(err)
	}
	root := runtimetest.New(t)
	if err := fs.Service.Provide(root, local); err != nil {
		t.Fatal(err)
	}
	runtimetest.Plug(t, root, registry.Plugin, nil)
	runtimetest.Plug(t, root, toolfs.Plugin, nil)
	tools, _ := registry.Tools.Lookup(root)
	for tool, args := range map[string]string{
		"read":  `{"file_path":"a.txt"}`,
		"write": `{"file_path":"a.txt","content":"x"}`,
	} {
		r := tools.Execute(context.Background(), &registry.Call{ID: "1", Tool: tool, Args: json.RawMessage(args)})
		wantError(t, r, "Error: the "+tool+` tool is unavailable while its plugin stops or restarts (cannot resolve "`+filepath.Join(dir, "a.txt")+`": the filesystem provider is closed); retry the call`, registry.CodeUnavailable)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !os.IsNotExist(err) {
		t.Fatalf("a.txt after a refused write: %v", err)
	}
}
