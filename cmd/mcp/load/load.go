package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis/internal/peakrss"
)

// callTimeout bounds one call or session opening: a server that cannot
// answer in time is counted as failing, not waited for.
const callTimeout = time.Minute

// Result is one run: sessions sessions, opened at once, each making its
// calls as fast as they are answered. Memory is in bytes: of the one
// server over HTTP, summed over the session's processes over stdio.
type Result struct {
	Transport       string `json:"transport"`
	Sessions        int    `json:"sessions"`
	CallsPerSession int    `json:"calls_per_session"`
	// Interval is how often a session starts a call (nanoseconds); 0: as
	// soon as its last call is answered.
	Interval time.Duration `json:"interval_ns"`
	Load     float64       `json:"load_average"` // of the last minute, before the run
	// Seconds is the call phase: from the first call to the last answer.
	Seconds        float64       `json:"seconds"`
	CallsPerSecond float64       `json:"calls_per_second"`
	Connect        Latency       `json:"connect"`
	Read           Latency       `json:"read"`
	Edit           Latency       `json:"edit"`
	Lost           int           `json:"lost_updates"` // files whose text is not what the edits reported
	Errors         int           `json:"errors"`       // failed calls and openings, and lost updates
	FirstErrors    []string      `json:"first_errors,omitempty"`
	ServerCPU      time.Duration `json:"server_cpu_ns"` // in the call phase
	ClientCPU      time.Duration `json:"client_cpu_ns"` // this process's, in the call phase
	// OtherCPU is what the rest of the machine used in the call phase:
	// other work on a shared machine, which the latencies suffer from, and
	// the kernel threads that write the run's edits to disk.
	OtherCPU time.Duration `json:"other_cpu_ns"`
	RSSStart int64         `json:"rss_start_bytes"` // HTTP: before the first session; stdio: 0
	RSSOpen  int64         `json:"rss_open_bytes"`  // every session open, its calls done
	RSSPeak  int64         `json:"rss_peak_bytes"`  // the high-water mark (VmHWM) by then
	RSSAfter int64         `json:"rss_after_bytes"` // HTTP: --settle after the last session closed; stdio: 0, the processes are gone
	// The anonymous part of RSSStart and RSSOpen: without the pages of
	// the executable, which the stdio processes share.
	AnonStart int64 `json:"anon_start_bytes"`
	AnonOpen  int64 `json:"anon_open_bytes"`
	// The heap the server's last collection found live (GODEBUG=gctrace,
	// whole MiB), HTTP only: before the first session; with every session
	// open, from a collection in the call phase; after the last closed,
	// from a collection in --settle. -1 when no collection ran.
	HeapStart int64 `json:"heap_live_start_bytes"`
	HeapOpen  int64 `json:"heap_live_open_bytes"`
	HeapAfter int64 `json:"heap_live_after_bytes"`
}

// PerSession is what one more open session costs in anonymous memory, the
// memory no other process shares: over stdio, a whole process's.
func (r *Result) PerSession() int64 { return (r.AnonOpen - r.AnonStart) / int64(r.Sessions) }

// The session's file: small, with one line its edits flip back and forth.
const (
	stateA = "state: A"
	stateB = "state: B"
)

func fileOf(i int) string { return fmt.Sprintf("s%04d.txt", i) }

// workspace fills dir with one small file per session (1.6 KiB, 20 lines).
func workspace(dir string, sessions int) error {
	var text strings.Builder
	for n := range 20 {
		if n == 10 {
			text.WriteString(stateA + "\n")
		}
		fmt.Fprintf(&text, "%02d the quick brown fox jumps over the lazy dog, then naps in the sun.\n", n)
	}
	for i := range sessions {
		if err := os.WriteFile(filepath.Join(dir, fileOf(i)), []byte(text.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// tally is what one session saw.
type tally struct {
	connect, read, edit          []time.Duration
	connectErr, readErr, editErr int
	state                        string // what its file holds after its successful edits
	firstErr                     error
}

func (t *tally) fail(err error) {
	if t.firstErr == nil {
		t.firstErr = err
	}
}

// measure opens n sessions through tr at once, has each make calls calls
// (a read of its file, then an edit of it, and so on: the read first, as
// the read-before-write policy wants) once all are open, then closes them.
// With an interval each session starts a call every interval, the first
// ones spread evenly over the first interval; without, as soon as its last
// call is answered.
func measure(ctx context.Context, tr transport, transportName, ws string, n, calls int, interval, settle time.Duration) (Result, error) {
	r := Result{Transport: transportName, Sessions: n, CallsPerSession: calls, Interval: interval, Load: loadAverage(), HeapStart: -1, HeapOpen: -1, HeapAfter: -1}
	gc, traced := tr.(gcTracer)
	if traced {
		if gcs, live := gc.lastGC(); gcs > 0 {
			r.HeapStart = live
		}
	}
	if pids := tr.pids(); len(pids) > 0 {
		m, err := sumMemory(pids)
		if err != nil {
			return r, err
		}
		r.RSSStart, r.AnonStart = m.RSS, m.Anon
	}
	tallies := make([]tally, n)
	sessions := make([]*mcp.ClientSession, n)
	var opened sync.WaitGroup
	for i := range n {
		opened.Go(func() {
			t := &tallies[i]
			t.state = stateA
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			defer cancel()
			start := time.Now()
			cs, err := tr.connect(cctx)
			if err != nil {
				t.connectErr++
				t.fail(fmt.Errorf("opening a session: %w", err))
				return
			}
			t.connect = append(t.connect, time.Since(start))
			sessions[i] = cs
		})
	}
	opened.Wait()

	// A server that died is left out of the figures below (they stay 0),
	// but not of the errors: its session's calls fail.
	pids := tr.pids()
	serverCPU, serverErr := sumCPU(pids)
	clientCPU, clientErr := cpuOf(os.Getpid())
	machineCPU, machineErr := busyCPU()
	var gcsBefore int
	if traced {
		gcsBefore, _ = gc.lastGC()
	}
	start := time.Now()
	var called sync.WaitGroup
	for i, cs := range sessions {
		if cs != nil {
			first := start.Add(interval * time.Duration(i) / time.Duration(n))
			called.Go(func() { session(ctx, cs, fileOf(i), calls, first, interval, &tallies[i]) })
		}
	}
	called.Wait()
	elapsed := time.Since(start)
	if cpu, err := sumCPU(pids); err == nil && serverErr == nil {
		r.ServerCPU = cpu - serverCPU
	}
	if cpu, err := cpuOf(os.Getpid()); err == nil && clientErr == nil {
		r.ClientCPU = cpu - clientCPU
	}
	if cpu, err := busyCPU(); err == nil && machineErr == nil {
		r.OtherCPU = max(cpu-machineCPU-r.ServerCPU-r.ClientCPU, 0)
	}
	if m, err := sumMemory(pids); err == nil {
		r.RSSOpen, r.RSSPeak, r.AnonOpen = m.RSS, m.HWM, m.Anon
	}
	if traced {
		if gcs, live := gc.lastGC(); gcs > gcsBefore {
			r.HeapOpen = live
		}
	}

	var closed sync.WaitGroup
	for _, cs := range sessions {
		if cs != nil {
			closed.Go(func() { cs.Close() })
		}
	}
	closed.Wait()
	tr.hangUp()
	if traced {
		gcsBefore, _ = gc.lastGC()
		time.Sleep(settle)
		if m, err := sumMemory(pids); err == nil {
			r.RSSAfter, r.RSSPeak = m.RSS, max(r.RSSPeak, m.HWM)
		}
		if gcs, live := gc.lastGC(); gcs > gcsBefore {
			r.HeapAfter = live
		}
	}

	var connect, read, edit []time.Duration
	for i := range tallies {
		t := &tallies[i]
		connect, read, edit = append(connect, t.connect...), append(read, t.read...), append(edit, t.edit...)
		r.Connect.Errors += t.connectErr
		r.Read.Errors += t.readErr
		r.Edit.Errors += t.editErr
		if sessions[i] == nil {
			continue
		}
		if err := check(filepath.Join(ws, fileOf(i)), t.state); err != nil {
			r.Lost++
			t.fail(err)
		}
		if t.firstErr != nil && len(r.FirstErrors) < 3 {
			r.FirstErrors = append(r.FirstErrors, fmt.Sprintf("session %d: %.300s", i, t.firstErr))
		}
	}
	r.Connect = summarize(connect, r.Connect.Errors)
	r.Read = summarize(read, r.Read.Errors)
	r.Edit = summarize(edit, r.Edit.Errors)
	r.Errors = r.Connect.Errors + r.Read.Errors + r.Edit.Errors + r.Lost
	r.Seconds = elapsed.Seconds()
	r.CallsPerSecond = float64(r.Read.Calls+r.Edit.Calls) / r.Seconds
	return r, nil
}

// session makes the calls of one session, alternating a read and an edit
// of its own file, so that no two sessions' edits meet; the first at
// first, then one every interval (at once after a call that took longer).
func session(ctx context.Context, cs *mcp.ClientSession, file string, calls int, first time.Time, interval time.Duration, t *tally) {
	next := first
	for i := range calls {
		if interval > 0 {
			time.Sleep(time.Until(next))
			if now := time.Now(); now.After(next) {
				next = now
			}
			next = next.Add(interval)
		}
		if i%2 == 0 {
			d, err := call(ctx, cs, "read", map[string]any{"file_path": file})
			if err != nil {
				t.readErr++
				t.fail(err)
				continue
			}
			t.read = append(t.read, d)
			continue
		}
		from, to := stateA, stateB
		if t.state == stateB {
			from, to = to, from
		}
		d, err := call(ctx, cs, "edit", map[string]any{"file_path": file, "old_string": from, "new_string": to})
		if err != nil {
			t.editErr++
			t.fail(err)
			continue
		}
		t.edit = append(t.edit, d)
		t.state = to
	}
}

// call makes one tool call and returns how long it took; a tool error is
// an error.
func call(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		var text string
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		return d, fmt.Errorf("%s failed: %s", tool, text)
	}
	return d, nil
}

// check reports a file that does not hold the state its session's
// successful edits left: a lost or torn update.
func check(path, state string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if bytes.Count(text, []byte("\nstate: ")) != 1 || !bytes.Contains(text, []byte("\n"+state+"\n")) {
		return fmt.Errorf("%s does not hold %q alone after the session's edits", filepath.Base(path), state)
	}
	return nil
}

func sumMemory(pids []int) (peakrss.Memory, error) {
	var sum peakrss.Memory
	for _, pid := range pids {
		m, err := peakrss.Status(pid)
		if err != nil {
			return peakrss.Memory{}, err
		}
		sum.RSS += m.RSS
		sum.HWM += m.HWM
		sum.Anon += m.Anon
	}
	return sum, nil
}

func sumCPU(pids []int) (time.Duration, error) {
	var sum time.Duration
	for _, pid := range pids {
		cpu, err := cpuOf(pid)
		if err != nil {
			return 0, err
		}
		sum += cpu
	}
	return sum, nil
}
