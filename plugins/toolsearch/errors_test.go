package toolsearch_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/fslocal"
	"github.com/gordis-run/gordis/plugins/toolsearch"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// S-053: raw output over the cap fails the whole call, for a tree and for
// one file whose lines alone pass it.
func TestRawOutputOverflow(t *testing.T) {
	both(t, func(t *testing.T, p provider) {
		e := setup(t, options{provider: p, config: toolsearch.Config{RawOutputMaxBytes: 10}})
		e.write(t, map[string]string{"a.txt": "needle one\n", "b.txt": ""})
		fits := setup(t, options{provider: p, config: toolsearch.Config{RawOutputMaxBytes: 12}})
		fits.write(t, map[string]string{"a.txt": "", "b.txt": ""})
		big := setup(t, options{provider: p, config: toolsearch.Config{RawOutputMaxBytes: 100}})
		big.write(t, map[string]string{"a.txt": strings.Repeat("hit\n", 100000)})
		check(t, e, p, []row{
			{name: "glob", tool: "glob", args: args{"pattern": "*"},
				want: "Error: glob produced 12 bytes of raw output, over the 10-byte cap; narrow pattern, path, or include and retry", code: toolsearch.CodeRawOutputOverflow},
			{name: "grep", tool: "grep", args: args{"pattern": "needle"},
				want: "Error: grep produced 15 bytes of raw output, over the 10-byte cap; narrow pattern, path, or include and retry", code: toolsearch.CodeRawOutputOverflow},
		})
		check(t, fits, p, []row{{name: "glob at the cap", tool: "glob", args: args{"pattern": "*"}, want: "a.txt\nb.txt"}})
		check(t, big, p, []row{{name: "one large file", tool: "grep", args: args{"pattern": "hit"},
			want: "Error: grep produced 104 bytes of raw output, over the 100-byte cap; narrow pattern, path, or include and retry", code: toolsearch.CodeRawOutputOverflow}})
	})
}

// wideTree writes n files of a few lines each in directories of 100.
func wideTree(t testing.TB, e *env, n int) {
	t.Helper()
	for d := 0; d*100 < n; d++ {
		dir := e.path(fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := d * 100; f < min(n, (d+1)*100); f++ {
			content := fmt.Sprintf("package p%d\n\nfunc main() {}\n// line %d\n", f, f)
			if err := os.WriteFile(fmt.Sprintf("%s/f%05d.go", dir, f), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// S-051: the configured deadline aborts a search in progress.
func TestTimeout(t *testing.T) {
	const aborted = "Error: %s was aborted before completion (tool timeout or caller cancellation)"
	both(t, func(t *testing.T, p provider) {
		e := setup(t, options{provider: p, config: toolsearch.Config{TimeoutMs: 1}})
		// Large enough that neither walk can finish within the
		// millisecond: fslocal's globbed 500 files in less.
		wideTree(t, e, 3000)
		want(t, e.call("grep", args{"pattern": `line \d+7$`}), fmt.Sprintf(aborted, "grep"), toolsearch.CodeAborted)
		want(t, e.call("glob", args{"pattern": "*.go"}), fmt.Sprintf(aborted, "glob"), toolsearch.CodeAborted)
	})
}

// S-050, S-051: a call cancelled before dispatch never runs; one cancelled
// during the search ends within 50 ms with SEARCH_ABORTED.
func TestCancellation(t *testing.T) {
	both(t, func(t *testing.T, p provider) {
		e := setup(t, options{provider: p})
		wideTree(t, e, 1000)
		var big strings.Builder
		for i := range 400000 {
			fmt.Fprintf(&big, "line %d of a large file with words\n", i)
		}
		e.write(t, map[string]string{"big/large.txt": big.String()})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		want(t, e.callCtx(ctx, "grep", args{"pattern": "x"}), "Error: tool call aborted before dispatch", registry.CodeAbortedBeforeDispatch)

		// Translating a Unicode class takes a while the first time; the
		// deadline covers it, but the latency measured is the search's.
		e.call("grep", args{"pattern": `\w+ z\d`, "path": "d000"})
		// The median of five attempts: a loaded machine may deschedule
		// the caller for longer than the search takes to stop.
		for _, c := range []struct {
			tool  string
			args  args
			after time.Duration
		}{
			{"grep", args{"pattern": `\w+ z\d`}, 15 * time.Millisecond},
			{"grep", args{"pattern": `\w+ z\d`, "path": "big/large.txt"}, 15 * time.Millisecond},
			{"glob", args{"pattern": "*.zzz"}, time.Millisecond},
		} {
			var latencies []time.Duration
			for range 5 {
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan *registry.Result, 1)
				go func() { done <- e.callCtx(ctx, c.tool, c.args) }()
				time.Sleep(c.after)
				start := time.Now()
				cancel()
				r := <-done
				latency := time.Since(start)
				switch {
				case r.Error == nil, r.Error.Code == registry.CodeAborted, r.Error.Code == registry.CodeAbortedBeforeDispatch:
					// Done before the cancellation, or so close to it that
					// the registry saw the context end after the tool's
					// success, or cancelled before it started: a
					// loaded machine can run the caller late either way.
					t.Logf("%s %v was not cancelled mid-search: %s", c.tool, c.args, r.Text)
					continue
				case r.Error.Code != toolsearch.CodeAborted:
					t.Fatalf("%s %v: %+v", c.tool, c.args, r.Error)
				}
				want(t, r, "Error: "+c.tool+" was aborted before completion (tool timeout or caller cancellation)", toolsearch.CodeAborted)
				latencies = append(latencies, latency)
			}
			slices.Sort(latencies)
			if len(latencies) > 0 && latencies[len(latencies)/2] > 50*time.Millisecond {
				t.Errorf("%s %v: returned %v after the cancellation", c.tool, c.args, latencies)
			}
		}
	})
}

// denying hides one directory's listing behind a permission error, as an
// unreadable directory gives a non-root user.
type denying struct {
	fs.FileSystem
	dir string
}

func (d denying) ListDir(ctx context.Context, t fs.Target) ([]fs.DirEntry, error) {
	if t.Path == d.dir {
		return nil, &fs.Error{Code: fs.CodePermission, Message: `cannot list "` + t.Path + `": permission denied`}
	}
	return d.FileSystem.ListDir(ctx, t)
}

// S-056: a directory that cannot be listed fails the whole search, even
// after matches.
func TestUnreadableDirectory(t *testing.T) {
	ws := t.TempDir()
	for name, content := range map[string]string{"a.txt": "needle\n", "locked/b.txt": "needle\n", "z.txt": "needle\n"} {
		os.MkdirAll(ws+"/locked", 0o755)
		if err := os.WriteFile(ws+"/"+name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := runtimetest.New(t)
	runtimetest.Plug(t, root, registry.Plugin, nil)
	runtimetest.Plug(t, root, runtime.Configured("fsdenying", func(ctx *runtime.Context, cfg fslocal.Config) error {
		f, err := fslocal.Open(cfg)
		if err != nil {
			return err
		}
		ctx.Effect(func() (func() error, error) { return f.Close, nil })
		return fs.Service.Provide(ctx, denying{f, ws + "/locked"})
	}), fslocal.Config{Cwd: ws})
	runtimetest.Plug(t, root, toolsearch.Plugin, nil)
	tools, _ := registry.Tools.Lookup(root)
	e := &env{ws: ws, s: session{cwd: ws}, tools: tools}
	check(t, e, fallback, []row{
		{name: "grep", tool: "grep", args: args{"pattern": "needle"},
			want: `Error: grep search failed (exit 2): rg: cannot list "` + ws + `/locked": permission denied`, code: toolsearch.CodeFailed},
		{name: "glob", tool: "glob", args: args{"pattern": "*"},
			want: `Error: glob search failed (exit 2): rg: cannot list "` + ws + `/locked": permission denied`, code: toolsearch.CodeFailed},
	})
}

// S-056 with the provider's Walker, on a real unreadable directory.
func TestUnreadableDirectoryWalker(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: a directory without permissions stays readable")
	}
	e := setup(t, options{})
	e.write(t, map[string]string{"a.txt": "needle\n", "locked/b.txt": "needle\n"})
	if err := os.Chmod(e.path("locked"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(e.path("locked"), 0o755)
	for _, tool := range []string{"grep", "glob"} {
		r := e.call(tool, args{"pattern": "needle"})
		if !r.IsError || !strings.HasPrefix(r.Text, "Error: "+tool+" search failed (exit 2): rg: ") || r.Error.Code != toolsearch.CodeFailed {
			t.Errorf("%s: %q", tool, r.Text)
		}
	}
}

// panicking is a provider whose file streams panic, as a buggy third-party
// provider's might.
type panicking struct{ fs.FileSystem }

func (panicking) StreamText(context.Context, fs.Target) (io.ReadCloser, error) {
	panic("provider bug")
}

// A panic on a worker goroutine reaches the registry as the tool's panic
// (TOOL_PANIC) instead of crashing the process.
func TestWorkerPanic(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(ws+"/a.txt", []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := runtimetest.New(t)
	runtimetest.Plug(t, root, registry.Plugin, nil)
	runtimetest.Plug(t, root, runtime.Configured("fspanicking", func(ctx *runtime.Context, cfg fslocal.Config) error {
		f, err := fslocal.Open(cfg)
		if err != nil {
			return err
		}
		ctx.Effect(func() (func() error, error) { return f.Close, nil })
		return fs.Service.Provide(ctx, panicking{f})
	}), fslocal.Config{Cwd: ws})
	runtimetest.Plug(t, root, toolsearch.Plugin, nil)
	tools, _ := registry.Tools.Lookup(root)
	e := &env{ws: ws, s: session{cwd: ws}, tools: tools}
	r := e.call("grep", args{"pattern": "needle"})
	if !r.IsError || r.Error.Code != registry.CodePanic || !strings.Contains(r.Text, "provider bug") {
		t.Errorf("%+v", r)
	}
}
