package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/runtime"
)

// tracker records when tool bodies run, and catches an exclusive body that
// overlaps anything.
type tracker struct {
	mu        sync.Mutex
	log       []string // "+id" on entry, "-id" on exit
	inflight  int
	peak      int
	exclusive bool // an exclusive body is running
	overlaps  []string
	bodies    map[string]func(ctx context.Context) (any, error)
}

func (tr *tracker) enter(id string, exclusive bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.exclusive || (exclusive && tr.inflight > 0) {
		tr.overlaps = append(tr.overlaps, fmt.Sprintf("%s entered with %d running (exclusive running: %v)", id, tr.inflight, tr.exclusive))
	}
	tr.log = append(tr.log, "+"+id)
	tr.inflight++
	tr.peak = max(tr.peak, tr.inflight)
	tr.exclusive = tr.exclusive || exclusive
}

func (tr *tracker) exit(id string, exclusive bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.log = append(tr.log, "-"+id)
	tr.inflight--
	if exclusive {
		tr.exclusive = false
	}
}

// body makes a tool body that records itself and runs bodies[call.ID].
func (tr *tracker) body(exclusive bool) func(context.Context, *Call) (any, error) {
	return func(ctx context.Context, call *Call) (any, error) {
		tr.enter(call.ID, exclusive)
		defer tr.exit(call.ID, exclusive)
		if fn := tr.bodies[call.ID]; fn != nil {
			return fn(ctx)
		}
		return "done " + call.ID, nil
	}
}

// batchRegistry registers tools of every scheduling mode:
// par (classifier true), excl (no classifier), no (classifier false),
// panicky (classifier panics).
func batchRegistry(t *testing.T, maxParallel int) (*runtime.Context, *Registry, *tracker) {
	t.Helper()
	root, r := newRegistry(t, Config{MaxParallel: maxParallel})
	tr := &tracker{bodies: map[string]func(context.Context) (any, error){}}
	mustRegister(t, root, r,
		Tool{Name: "par", Execute: tr.body(false), ConcurrencySafe: func(json.RawMessage) bool { return true }},
		Tool{Name: "excl", Execute: tr.body(true)},
		Tool{Name: "no", Execute: tr.body(true), ConcurrencySafe: func(json.RawMessage) bool { return false }},
		Tool{Name: "panicky", Execute: tr.body(true), ConcurrencySafe: func(json.RawMessage) bool { panic("classifier") }},
	)
	return root, r, tr
}

// calls builds calls from "tool:id" specs.
func calls(specs ...string) []*Call {
	out := make([]*Call, len(specs))
	for i, s := range specs {
		tool, id, _ := strings.Cut(s, ":")
		out[i] = &Call{ID: id, Tool: tool}
	}
	return out
}

// barrier makes n bodies wait for each other: it only opens when all n are
// running at once, so it proves they overlap (or fails after a timeout).
func barrier(t *testing.T, n int) func(context.Context) (any, error) {
	var mu sync.Mutex
	arrived := 0
	open := make(chan struct{})
	return func(context.Context) (any, error) {
		mu.Lock()
		arrived++
		if arrived == n {
			close(open)
		}
		mu.Unlock()
		select {
		case <-open:
			return "met", nil
		case <-time.After(10 * time.Second):
			t.Errorf("barrier of %d: only %d arrived; calls did not overlap", n, arrived)
			return nil, fmt.Errorf("no overlap")
		}
	}
}

func index(log []string, entry string) int {
	i := slices.Index(log, entry)
	if i < 0 {
		panic("missing log entry " + entry)
	}
	return i
}

func checkOrder(t *testing.T, res []*Result, cs []*Call) {
	t.Helper()
	if len(res) != len(cs) {
		t.Fatalf("%d results for %d calls", len(res), len(cs))
	}
	for i := range cs {
		if res[i] == nil || res[i].CallID != cs[i].ID {
			t.Fatalf("result %d is %+v, want call %s", i, res[i], cs[i].ID)
		}
	}
}

// Parallel calls really overlap; an exclusive call is a barrier that
// overlaps nothing; results come back in input order.
func TestBatchOverlapAndBarrier(t *testing.T) {
	root, r, tr := batchRegistry(t, 10)
	rs := listenResults(t, root)
	first, second := barrier(t, 3), barrier(t, 2)
	tr.bodies["p1"], tr.bodies["p2"], tr.bodies["p3"] = first, first, first
	tr.bodies["p4"], tr.bodies["p5"] = second, second
	cs := calls("par:p1", "par:p2", "par:p3", "excl:x", "par:p4", "par:p5")
	res := r.ExecuteBatch(context.Background(), cs)
	checkOrder(t, res, cs)
	for _, res := range res {
		if res.IsError {
			t.Fatalf("%s: %s", res.CallID, res.Text)
		}
	}
	if len(tr.overlaps) > 0 {
		t.Fatalf("exclusive overlap: %v", tr.overlaps)
	}
	for _, p := range []string{"p1", "p2", "p3"} {
		if index(tr.log, "-"+p) > index(tr.log, "+x") {
			t.Fatalf("x started before %s finished: %v", p, tr.log)
		}
	}
	for _, p := range []string{"p4", "p5"} {
		if index(tr.log, "+"+p) < index(tr.log, "-x") {
			t.Fatalf("%s started before x finished: %v", p, tr.log)
		}
	}
	if emitted := rs.list(); len(emitted) != len(cs) || !slices.Equal(emitted, res) {
		t.Fatalf("tools/result emitted %v, want the results in input order", emitted)
	}
}

// Only a classifier that says true makes a call parallel: none, false, a
// panic or an unknown tool all mean exclusive (agent-loop §1.3).
func TestBatchExclusiveModes(t *testing.T) {
	_, r, tr := batchRegistry(t, 10)
	pair := func() func(context.Context) (any, error) { return barrier(t, 2) }
	b1, b2, b3 := pair(), pair(), pair()
	tr.bodies["a1"], tr.bodies["a2"] = b1, b1
	tr.bodies["b1"], tr.bodies["b2"] = b2, b2
	tr.bodies["c1"], tr.bodies["c2"] = b3, b3
	// d1 and d2 are split by an unknown tool, which is a barrier too.
	cs := calls("par:a1", "par:a2", "excl:e", "par:b1", "par:b2", "no:n", "par:c1", "par:c2", "panicky:k", "par:d1", "missing:u", "par:d2")
	res := r.ExecuteBatch(context.Background(), cs)
	checkOrder(t, res, cs)
	if len(tr.overlaps) > 0 {
		t.Fatalf("exclusive overlap: %v", tr.overlaps)
	}
	if res[10].Error == nil || res[10].Error.Code != CodeUnknownTool {
		t.Fatalf("unknown tool: %+v", res[10])
	}
	for i, res := range res {
		if i != 10 && res.IsError {
			t.Fatalf("%s: %s", res.CallID, res.Text)
		}
	}
	if index(tr.log, "-d1") > index(tr.log, "+d2") {
		t.Fatalf("d1 and d2 overlapped across an unknown tool: %v", tr.log)
	}
}

// The pool never holds more than MaxParallel bodies, and refills as soon as
// one finishes (rolling, not in waves).
func TestBatchMaxParallel(t *testing.T) {
	_, r, tr := batchRegistry(t, 2)
	started := make(chan string, 10)
	release := map[string]chan struct{}{}
	for _, id := range []string{"p1", "p2", "p3", "p4", "p5"} {
		release[id] = make(chan struct{})
		tr.bodies[id] = func(context.Context) (any, error) {
			started <- id
			<-release[id]
			return id, nil
		}
	}
	cs := calls("par:p1", "par:p2", "par:p3", "par:p4", "par:p5")
	done := make(chan []*Result)
	go func() { done <- r.ExecuteBatch(context.Background(), cs) }()

	// expectStart waits for one start among want (goroutines race to start).
	expectStart := func(want ...string) string {
		t.Helper()
		select {
		case got := <-started:
			if !slices.Contains(want, got) {
				t.Fatalf("started %s, want one of %v", got, want)
			}
			return got
		case <-time.After(10 * time.Second):
			t.Fatalf("none of %v started", want)
			return ""
		}
	}
	expectNoStart := func() {
		t.Helper()
		select {
		case got := <-started:
			t.Fatalf("%s started beyond the cap", got)
		case <-time.After(50 * time.Millisecond):
		}
	}
	a := expectStart("p1", "p2")
	expectStart(slices.DeleteFunc([]string{"p1", "p2"}, func(s string) bool { return s == a })...)
	expectNoStart()
	close(release["p2"]) // a slot frees: exactly one more starts
	expectStart("p3")
	expectNoStart()
	close(release["p1"])
	expectStart("p4")
	close(release["p3"])
	expectStart("p5")
	close(release["p4"])
	close(release["p5"])
	res := <-done
	checkOrder(t, res, cs)
	if tr.peak != 2 {
		t.Fatalf("peak concurrency %d, want 2", tr.peak)
	}
}

// Bodies overlap, but the steps before them (arguments, permission) run one
// call at a time in input order, and results are emitted in input order even
// when later calls finish first.
func TestBatchPrepareAndEmitInOrder(t *testing.T) {
	root, r, tr := batchRegistry(t, 10)
	var mu sync.Mutex
	var prepared []string
	if _, err := PreExecute.On(root, func(req *Request, next runtime.Next[Decision]) (Decision, error) {
		mu.Lock()
		prepared = append(prepared, req.Call.ID)
		mu.Unlock()
		return next()
	}); err != nil {
		t.Fatal(err)
	}
	rs := listenResults(t, root)
	// p1 waits for p2 to finish, p2 for p3: they finish in reverse order.
	finished := map[string]chan struct{}{"p1": make(chan struct{}), "p2": make(chan struct{}), "p3": make(chan struct{})}
	waitFor := map[string]string{"p1": "p2", "p2": "p3"}
	var finishOrder []string
	for id := range finished {
		tr.bodies[id] = func(context.Context) (any, error) {
			if other, ok := waitFor[id]; ok {
				<-finished[other]
			}
			mu.Lock()
			finishOrder = append(finishOrder, id)
			mu.Unlock()
			close(finished[id])
			return id, nil
		}
	}
	cs := calls("par:p1", "par:p2", "par:p3")
	res := r.ExecuteBatch(context.Background(), cs)
	checkOrder(t, res, cs)
	if strings.Join(prepared, ",") != "p1,p2,p3" {
		t.Fatalf("prepared in order %v", prepared)
	}
	if got := strings.Join(finishOrder, ","); got != "p3,p2,p1" {
		t.Fatalf("bodies finished %s", got)
	}
	if emitted := rs.list(); !slices.Equal(emitted, res) {
		t.Fatalf("emitted out of order: %v", emitted)
	}
}

// Cancelling mid-batch: started calls are awaited and keep their own error
// or become "tool call aborted"; calls not started get the before-dispatch
// result; still exactly one result (and one tools/result) per call.
func TestBatchCancelMidway(t *testing.T) {
	root, r, tr := batchRegistry(t, 2)
	rs := listenResults(t, root)
	var running sync.WaitGroup
	running.Add(2)
	tr.bodies["stubborn"] = func(ctx context.Context) (any, error) {
		running.Done()
		<-ctx.Done()
		return "landed anyway", nil
	}
	tr.bodies["coop"] = func(ctx context.Context) (any, error) {
		running.Done()
		<-ctx.Done()
		return nil, &fs.Error{Code: fs.CodeAborted, Message: "read aborted", Err: ctx.Err()}
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { running.Wait(); cancel() }()
	// waiting is queued for a slot when the cancel comes.
	cs := calls("par:stubborn", "par:coop", "par:waiting", "excl:x", "par:last")
	res := r.ExecuteBatch(ctx, cs)
	checkOrder(t, res, cs)
	want := []string{
		"Error: tool call aborted",
		"Error: read aborted",
		"Error: tool call aborted before dispatch",
		"Error: tool call aborted before dispatch",
		"Error: tool call aborted before dispatch",
	}
	codes := []string{CodeAborted, fs.CodeAborted, CodeAbortedBeforeDispatch, CodeAbortedBeforeDispatch, CodeAbortedBeforeDispatch}
	for i := range res {
		if res[i].Text != want[i] || res[i].Error.Code != codes[i] {
			t.Errorf("%s: %s (%s), want %s (%s)", res[i].CallID, res[i].Text, res[i].Error.Code, want[i], codes[i])
		}
	}
	for _, id := range []string{"waiting", "x", "last"} {
		if slices.Contains(tr.log, "+"+id) {
			t.Fatalf("%s ran after the cancel: %v", id, tr.log)
		}
	}
	// The listeners get every result in order, though the cancelled batch
	// did not wait for them.
	if emitted := rs.await(t, len(res)); !slices.Equal(emitted, res) {
		t.Fatalf("emitted %d results, want %d in order", len(emitted), len(res))
	}
}

func TestBatchPreCancelled(t *testing.T) {
	_, r, tr := batchRegistry(t, 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cs := calls("par:a", "excl:b", "missing:c")
	res := r.ExecuteBatch(ctx, cs)
	checkOrder(t, res, cs)
	for _, res := range res {
		if res.Error == nil || res.Error.Code != CodeAbortedBeforeDispatch {
			t.Fatalf("%+v", res)
		}
	}
	if len(tr.log) != 0 {
		t.Fatalf("bodies ran: %v", tr.log)
	}
	if got := r.ExecuteBatch(ctx, nil); len(got) != 0 {
		t.Fatalf("empty batch: %v", got)
	}
}
