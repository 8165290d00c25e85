// Command benchtools measures the tools end to end: each workload is
// one registry.Execute of a real tool in the default deployment
// (gordis.Build), in a fresh child process, next to floors that do the
// same work with standard commands in the same run (wc -l, ls -f, cp and
// sync, dd with conv=fsync; for glob and grep, rg with upstream's command
// line, rg -n, and rg piped into Node as upstream parses it). Each search
// runs again as the one line of a built `demo replay`, the level a user
// touches; so does each file tool call, a write or an edit with
// --no-policy (the child reads before it edits). It prints, for each, the call's and the process's wall
// time over -runs runs (median, min and max), the peak RSS of the process,
// and the ratios to each floor. The child reports its own peak RSS (VmHWM);
// a floor's comes from GNU time when /usr/bin/time exists, since the
// maxrss wait4 reports for a child on Linux includes the memory of the
// process that started it.
//
// The files live in a temporary directory it creates and removes. Sizes are
// flags; -quick shrinks them all for a smoke run, and -only picks tools.
//
//	go run ./cmd/benchtools            # or: make bench-tools
//	go run ./cmd/benchtools -quick
//	go run ./cmd/benchtools -only glob,grep
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/internal/peakrss"
	"github.com/gordis-run/gordis/registry"
)

// childFlag starts the binary as the child that runs one tool call.
const childFlag = "-child"

func main() {
	if len(os.Args) > 1 && os.Args[1] == childFlag {
		if err := child(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "benchtools child:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "benchtools:", err)
	}
	os.Exit(exitCode(err))
}

// usageError is a bad command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg + " (see benchtools -help)" }

// exitCode is 0 for success and -help, 2 for a bad command line, as the
// flag package has it, and 1 for a run that failed.
func exitCode(err error) int {
	var usage *usageError
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usage):
		return 2
	}
	return 1
}

const usage = `usage: benchtools [flags]      (or: make bench-tools ARGS="flags")

Runs each tool workload in a fresh process next to its floor and prints a
table of wall times, peak RSS and ratios.

Flags:
`

// child runs one call: benchtools -child WORKSPACE TOOL ARGSFILE [READFIRST].
// The arguments are read from a file, as they would arrive from a model:
// bytes of JSON in memory. READFIRST is read (one line) before the timed
// call, so that the read-before-write policy lets an edit through. It
// prints the call's duration in nanoseconds and its own peak RSS in bytes
// (0 where the platform does not say).
func child(args []string, stdout io.Writer) error {
	if len(args) < 3 || len(args) > 4 {
		return fmt.Errorf("want WORKSPACE TOOL ARGSFILE [READFIRST], got %q", args)
	}
	workspace, tool, argsFile := args[0], args[1], args[2]
	callArgs, err := os.ReadFile(argsFile)
	if err != nil {
		return err
	}
	d, cleanup, err := gordis.Build(gordis.Options{Workspace: workspace})
	if err != nil {
		return err
	}
	defer cleanup()
	session := agent.NewSession(d.Workspace)
	defer session.Close()
	ctx := context.Background()
	if len(args) == 4 {
		readArgs, _ := json.Marshal(map[string]any{"file_path": args[3], "limit": 1})
		if res := d.Tools.Execute(ctx, &registry.Call{ID: "read-first", Tool: "read", Args: readArgs, Session: session}); res.IsError {
			return errors.New(res.Text)
		}
	}
	start := time.Now()
	res := d.Tools.Execute(ctx, &registry.Call{ID: "measured", Tool: tool, Args: callArgs, Session: session})
	elapsed := time.Since(start)
	if res.IsError {
		return fmt.Errorf("%s: %s", tool, res.Text)
	}
	peak, _ := peakrss.Self() // 0 where the platform does not say
	_, err = fmt.Fprintln(stdout, elapsed.Nanoseconds(), peak)
	return err
}

// sizes are the workloads' sizes, and the real tree the searches copy.
type sizes struct {
	readMiB, editMiB int
	listEntries      int
	writeMiB         []int
	src              string
	treeFiles        int
	grepMiB          int
}

// tools are the tools with workloads, in the table's order.
var tools = []string{"read", "list", "edit", "write", "glob", "grep"}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("benchtools", flag.ContinueOnError)
	// The flag package would print each parse error, and the help, on its
	// output: errors are returned instead, and the help goes to stdout.
	fl.SetOutput(io.Discard)
	fl.Usage = func() {}
	runs := fl.Int("runs", 5, "measure each workload and floor `N` times")
	quick := fl.Bool("quick", false, "a smoke run: 16 MiB read, 1,010 entries, 1 MiB edit, 1 and 4 MiB writes,\nGOROOT/src/os searched, 2,000 synthetic files, a 4 MiB grep, 1 run")
	only := fl.String("only", "", "run only the workloads of these `TOOLS`, comma-separated (default: all of "+strings.Join(tools, ",")+")")
	dir := fl.String("dir", "", "create the temporary directory under `DIR` (default: the system's)")
	var sz sizes
	fl.IntVar(&sz.readMiB, "read-mib", 512, "size of the file read, head and tail, in `MiB`")
	fl.IntVar(&sz.listEntries, "list-entries", 10100, "`N` entries in the directory listed")
	fl.IntVar(&sz.editMiB, "edit-mib", 10, "size of the file one line of which is edited, in `MiB`")
	writes := fl.String("write-mib", "8,64", "sizes of the new files written, in `MiB`, comma-separated")
	fl.StringVar(&sz.src, "src", "", "glob and grep search a copy of `DIR` (default: $(go env GOROOT)/src)")
	fl.IntVar(&sz.treeFiles, "tree-files", 100000, "`N` small files, 100 a directory, in the synthetic tree searched")
	fl.IntVar(&sz.grepMiB, "grep-mib", 1024, "size of the one file grep searches, in `MiB`")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			fl.SetOutput(stdout)
			fl.PrintDefaults()
			return err
		}
		return &usageError{err.Error()}
	}
	if fl.NArg() > 0 {
		return &usageError{fmt.Sprintf("unexpected argument %q", fl.Arg(0))}
	}
	want := func(string) bool { return true }
	if *only != "" {
		selected := strings.Split(*only, ",")
		for _, t := range selected {
			if !slices.Contains(tools, t) {
				return &usageError{fmt.Sprintf("-only: %q is not one of %s", t, strings.Join(tools, ","))}
			}
		}
		want = func(tool string) bool { return slices.Contains(selected, tool) }
	}
	if *quick {
		sz = sizes{readMiB: 16, listEntries: 1010, editMiB: 1, writeMiB: []int{1, 4}, src: sz.src, treeFiles: 2000, grepMiB: 4}
		*runs = 1
	} else {
		for _, f := range strings.Split(*writes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return &usageError{fmt.Sprintf("-write-mib: %q is not a positive number of MiB", f)}
			}
			sz.writeMiB = append(sz.writeMiB, n)
		}
	}
	if *runs < 1 || sz.readMiB < 1 || sz.editMiB < 1 || sz.listEntries < 1 || sz.treeFiles < 1 || sz.grepMiB < 1 {
		return &usageError{"-runs and every size must be at least 1"}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(*dir, "benchtools-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	fmt.Fprintf(stdout, "preparing files in %s (removed at the end)...\n", tmp)
	demo, err := buildDemo(ctx, tmp)
	if err != nil {
		return err
	}
	workloads, err := prepare(tmp, sz, want, demo)
	if err != nil {
		return err
	}
	if want("glob") || want("grep") {
		searches, err := searchWorkloads(ctx, tmp, sz, *quick, want, demo, stdout)
		if err != nil {
			return err
		}
		workloads = append(workloads, searches...)
	}
	fmt.Fprintf(stdout, "%s; %d runs each\n\n", machine(), *runs)
	var results []result
	for _, w := range workloads {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := measure(ctx, self, w, *runs)
		if err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		results = append(results, r)
	}
	if err := printTable(stdout, results); err != nil {
		return err
	}
	if load := loadAverage(); load != "" {
		_, err = fmt.Fprintf(stdout, "load at the end: %s\n", load)
	}
	return err
}

// searchWorkloads prepares the search workloads in dir: it finds rg and
// node, saying which floors are left out, and finds the real tree when
// -src is not given. demo is the built binary of the replay rows.
func searchWorkloads(ctx context.Context, dir string, sz sizes, quick bool, want func(string) bool, demo string, stdout io.Writer) ([]workload, error) {
	env := searchEnv{jobs: runtime.GOMAXPROCS(0), demo: demo}
	for _, c := range []struct {
		path          *string
		name, without string
	}{
		{&env.rg, "rg", "the search workloads have no floor (Debian package ripgrep)"},
		{&env.node, "node", "no floor stands for upstream's cost (rg then a Node parse)"},
	} {
		if path, err := exec.LookPath(c.name); err == nil {
			*c.path = path
		} else {
			fmt.Fprintf(stdout, "%s not found: %s\n", c.name, c.without)
		}
	}
	if env.rg != "" {
		version, err := exec.CommandContext(ctx, env.rg, "--version").Output()
		if err != nil {
			return nil, fmt.Errorf("rg --version: %w", err)
		}
		first, _, _ := strings.Cut(string(version), "\n")
		fmt.Fprintf(stdout, "%s, with --threads=%d: the child's GOMAXPROCS\n", first, env.jobs)
	}
	if sz.src == "" {
		goroot, err := exec.CommandContext(ctx, "go", "env", "GOROOT").Output()
		if err != nil {
			return nil, fmt.Errorf("go env GOROOT: %w", err)
		}
		sz.src = filepath.Join(strings.TrimSpace(string(goroot)), "src")
		if quick {
			sz.src = filepath.Join(sz.src, "os")
		}
	}
	return prepareSearch(dir, sz, want, env)
}
