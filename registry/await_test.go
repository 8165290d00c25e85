package registry

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// deadline is the call deadline of the tests with a listener that never
// returns; a call must come back well within late.
const (
	deadline = 300 * time.Millisecond
	late     = time.Second
)

// within runs call and fails the test if it takes late or more (the
// listener still blocked then is released by the test's cleanup).
func within[T any](t *testing.T, call func() T) (T, time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan T, 1)
	go func() { done <- call() }()
	select {
	case v := <-done:
		return v, time.Since(start)
	case <-time.After(late):
		t.Fatalf("the call is still running %v after it started, with a %v deadline", late, deadline)
		panic("unreachable")
	}
}

// stuck returns a channel that stays open until the test's cleanup closes
// it, for a listener to block on. Call it after the root is created, so the
// listener returns before the root closes.
func stuck(t *testing.T) chan struct{} {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return release
}

// abandoned returns the warnings Await logged.
func abandoned(logs *runtimetest.Logs) []runtimetest.Record {
	var out []runtimetest.Record
	for _, r := range logs.Records() {
		if r.Level == slog.LevelWarn && strings.HasPrefix(r.Message, "listeners abandoned") {
			out = append(out, r)
		}
	}
	return out
}

// wantAbandoned asserts that exactly the listed calls' listeners of event
// were abandoned and logged, with the tool and the call. A batch's warning
// may come just after the batch returned: both follow the deadline.
func wantAbandoned(t *testing.T, logs *runtimetest.Logs, event, tool string, ids ...string) {
	t.Helper()
	got := abandoned(logs)
	for end := time.Now().Add(late); len(got) < len(ids) && time.Now().Before(end); got = abandoned(logs) {
		time.Sleep(time.Millisecond)
	}
	if len(got) != len(ids) {
		t.Fatalf("%d abandonments logged, want %d: %+v", len(got), len(ids), got)
	}
	for i, r := range got {
		if r.Attrs["event"] != event || r.Attrs["tool"] != tool || r.Attrs["call"] != ids[i] || r.Attrs["cause"] != context.DeadlineExceeded.Error() {
			t.Errorf("logged %v, want event %s, tool %s, call %s", r.Attrs, event, tool, ids[i])
		}
	}
}

// A tools/result listener that never returns holds neither Execute nor
// ExecuteBatch past the deadline; the result stands, and the abandonment is
// logged. Listeners see the call's context.
func TestResultListenersBoundedByContext(t *testing.T) {
	logs := runtimetest.NewLogs()
	root := runtimetest.New(t, runtime.WithLogger(slog.New(logs)))
	r := New(root, Config{})
	mustRegister(t, root, r, Tool{Name: "write", Execute: noop})
	release := stuck(t)
	seen := make(chan context.Context, 3)
	if _, err := ResultEvent.On(root, func(res *Result) error {
		seen <- res.Context()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ResultEvent.On(root, func(*Result) error {
		<-release // ignores res.Context(), as a buggy plugin would
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	res, took := within(t, func() *Result { return r.Execute(ctx, &Call{ID: "1", Tool: "write"}) })
	t.Logf("Execute returned after %v", took)
	if res.IsError || res.Text != "ok" {
		t.Fatalf("result %+v", res)
	}
	if got := <-seen; got != ctx || res.Context() != ctx {
		t.Fatalf("the listener saw %v, the result carries %v, want the call's context", got, res.Context())
	}
	wantAbandoned(t, logs, "tools/result", "write", "1")

	ctx, cancel = context.WithTimeout(context.Background(), deadline)
	defer cancel()
	batch, took := within(t, func() []*Result {
		return r.ExecuteBatch(ctx, []*Call{{ID: "2", Tool: "write"}, {ID: "3", Tool: "write"}})
	})
	t.Logf("ExecuteBatch returned after %v", took)
	for _, res := range batch {
		if res.IsError || res.Text != "ok" {
			t.Fatalf("batch result %+v", res)
		}
	}
	// The second result reaches the listeners after the deadline: the batch
	// no longer waits, so there is no abandonment to report for it.
	wantAbandoned(t, logs, "tools/result", "write", "1", "2")
}

// Await returns the dispatch's outcome in time; once ctx ends first it
// returns ErrAbandoned, logging only when it was kept waiting; the
// dispatch runs in every case.
func TestAwait(t *testing.T) {
	call := &Call{ID: "c", Tool: "t"}
	tests := []struct {
		name   string
		ctx    func() (context.Context, context.CancelFunc)
		block  bool // the dispatch blocks until the test ends
		want   error
		logged int
	}{
		{"returns in time", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Minute)
		}, false, nil, 0},
		{"no Done channel", func() (context.Context, context.CancelFunc) {
			return context.Background(), func() {}
		}, false, nil, 0},
		{"ends while waiting", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 10*time.Millisecond)
		}, true, ErrAbandoned, 1},
		{"ended before", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, true, ErrAbandoned, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := runtimetest.NewLogs()
			release := stuck(t)
			ctx, cancel := tt.ctx()
			defer cancel()
			ran := make(chan struct{})
			v, err := Await(ctx, slog.New(logs), "e", call, func() (string, error) {
				close(ran)
				if tt.block {
					<-release
				}
				return "decided", nil
			})
			<-ran
			if !errors.Is(err, tt.want) || (err == nil) != (v == "decided") {
				t.Fatalf("Await = %q, %v; want %v", v, err, tt.want)
			}
			if n := len(abandoned(logs)); n != tt.logged {
				t.Fatalf("%d warnings, want %d", n, tt.logged)
			}
		})
	}
}
