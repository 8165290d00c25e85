// Command load measures cmd/mcp under many concurrent MCP sessions, over
// streamable HTTP (one server for every session) and over stdio (one
// server process per session, as desktop clients run it), with the Go SDK
// client.
//
// For each number of sessions and each transport it starts fresh servers
// on a fresh workspace holding one small file per session, opens every
// session at once, and once all are open has each make --calls calls as
// fast as they are answered: a read of its own file, an edit of it (the
// read first, as the read-before-write policy wants; no two sessions edit
// the same file), a read, and so on. It prints the throughput, the p50,
// p99 and maximum latency per tool, the servers' CPU time, and their
// resident memory (/proc/PID/status): before the first session, with
// every session open, the high-water mark, and --settle after the last
// session closed. Each file is read back at the end: one that does not hold
// what its session's edits reported counts as an error (a lost update).
//
// Over HTTP every session shares one bearer token, so the server runs with
// --rate 0: its default of 100 calls per second per token would refuse
// most of the load. Run it from the repository, on Linux:
//
//	go run ./cmd/mcp/load [--sessions 1,10,100,500] [--calls 20] [--transport http,stdio] [--json]
//
// docs/benchmarks.md reports its figures.
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
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("load", flag.ContinueOnError)
	fl.SetOutput(stderr)
	sessionsFlag := fl.String("sessions", "1,10,100,500", "the numbers of concurrent sessions to measure, comma-separated")
	calls := fl.Int("calls", 20, "calls per session (alternately a read and an edit of its file)")
	transportsFlag := fl.String("transport", "http,stdio", "the transports to measure: http, stdio or both, comma-separated")
	asJSON := fl.Bool("json", false, "print the results as JSON")
	bin := fl.String("gordis", "", "the cmd/mcp `binary` (default: go build ./cmd/mcp into a temporary directory)")
	interval := fl.Duration("interval", 0, "how often each session starts a call, as an agent between its model's answers (0: as soon as its last call is answered)")
	settle := fl.Duration("settle", 2*time.Second, "over HTTP, how long after the last session closed the server's memory is read")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fl.Arg(0))
	}
	sessions, err := counts(*sessionsFlag)
	if err != nil {
		return err
	}
	transports := strings.Split(*transportsFlag, ",")
	for _, t := range transports {
		if t != "http" && t != "stdio" {
			return fmt.Errorf("--transport %q: want http, stdio or both", *transportsFlag)
		}
	}
	if *calls < 1 {
		return errors.New("--calls must be at least 1")
	}

	tmp, err := os.MkdirTemp("", "gordis-mcp-load")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if *bin == "" {
		*bin = filepath.Join(tmp, "mcp")
		if out, err := exec.Command("go", "build", "-o", *bin, "github.com/gordis-run/gordis/cmd/mcp").CombinedOutput(); err != nil {
			return fmt.Errorf("building cmd/mcp (run from the repository): %v\n%s", err, out)
		}
	}

	var results []Result
	for _, n := range sessions {
		for _, name := range transports {
			r, err := runOne(ctx, name, *bin, filepath.Join(tmp, fmt.Sprintf("%s-%d", name, n)), n, *calls, *interval, *settle)
			if err != nil {
				return fmt.Errorf("%s, %d sessions: %w", name, n, err)
			}
			fmt.Fprintf(stderr, "load: %s, %d sessions: %d calls, %d errors, %.0f calls/s\n",
				name, n, r.Read.Calls+r.Edit.Calls, r.Errors, r.CallsPerSecond)
			results = append(results, r)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	report(stdout, results)
	return nil
}

// runOne measures n sessions over one transport, with servers of their own
// on a workspace of their own in dir.
func runOne(ctx context.Context, name, bin, dir string, n, calls int, interval, settle time.Duration) (Result, error) {
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return Result{}, err
	}
	if err := workspace(ws, n); err != nil {
		return Result{}, err
	}
	var tr transport = &stdioServers{bin: bin, ws: ws}
	if name == "http" {
		s, err := startHTTP(bin, ws, dir, n)
		if err != nil {
			return Result{}, err
		}
		tr = s
	}
	r, err := measure(ctx, tr, name, ws, n, calls, interval, settle)
	return r, errors.Join(err, tr.stop())
}

// counts parses a comma-separated list of positive numbers.
func counts(list string) ([]int, error) {
	var ns []int
	for f := range strings.SplitSeq(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--sessions %q: want positive numbers separated by commas", list)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// report prints the results as a Markdown table, then the first errors.
func report(w io.Writer, results []Result) {
	fmt.Fprintln(w, "| transport | sessions | calls | errors | calls/s | read p50 / p99 / max ms | edit p50 / p99 / max ms | open p50 / max ms | server CPU µs/call | client CPU µs/call | other cores | RSS start / open / peak / after MiB | anon start / open MiB | per session KiB | live heap start / open / after MiB | load |")
	fmt.Fprintln(w, "|"+strings.Repeat(" --- |", 16))
	for _, r := range results {
		calls := r.Read.Calls + r.Edit.Calls
		after := "–"
		if r.Transport == "http" {
			after = mib(r.RSSAfter)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %.0f | %s | %s | %s / %s | %.0f | %.0f | %.2f | %s / %s / %s / %s | %s / %s | %d | %s / %s / %s | %.2f |\n",
			r.Transport, r.Sessions, calls, r.Errors, r.CallsPerSecond,
			spread(r.Read), spread(r.Edit), ms(r.Connect.P50), ms(r.Connect.Max),
			perCall(r.ServerCPU, calls), perCall(r.ClientCPU, calls), r.OtherCPU.Seconds()/r.Seconds,
			mib(r.RSSStart), mib(r.RSSOpen), mib(r.RSSPeak), after, mib(r.AnonStart), mib(r.AnonOpen), r.PerSession()>>10, heap(r.HeapStart), heap(r.HeapOpen), heap(r.HeapAfter), r.Load)
	}
	var errs []string
	for _, r := range results {
		for _, e := range r.FirstErrors {
			errs = append(errs, fmt.Sprintf("%s, %d sessions, %s", r.Transport, r.Sessions, e))
		}
	}
	if len(errs) > 0 {
		fmt.Fprintf(w, "\nfirst errors:\n%s\n", strings.Join(slices.Compact(errs), "\n"))
	}
}

func spread(l Latency) string { return ms(l.P50) + " / " + ms(l.P99) + " / " + ms(l.Max) }

func ms(d time.Duration) string { return strconv.FormatFloat(d.Seconds()*1e3, 'f', 2, 64) }

func mib(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) }

// heap is a live heap in MiB, or a dash where no collection said.
func heap(b int64) string {
	if b < 0 {
		return "–"
	}
	return strconv.FormatInt(b>>20, 10)
}

func perCall(cpu time.Duration, calls int) float64 {
	if calls == 0 {
		return 0
	}
	return float64(cpu.Microseconds()) / float64(calls)
}
