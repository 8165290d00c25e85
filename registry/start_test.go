package registry

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestStartBracketsEveryCall: tools/start fires once per call, before its
// steps, for Execute and for every path through a batch; each result says
// how long its call took and sums up its outcome in Code.
func TestStartBracketsEveryCall(t *testing.T) {
	root, r := newRegistry(t, Config{})
	const nap = 20 * time.Millisecond
	sleep := func(ctx context.Context, _ *Call) (any, error) { time.Sleep(nap); return "slept", nil }
	mustRegister(t, root, r,
		Tool{Name: "slow", Execute: sleep},
		Tool{Name: "slowpar", Execute: sleep, ConcurrencySafe: func(json.RawMessage) bool { return true }},
		Tool{Name: "fail", Execute: func(context.Context, *Call) (any, error) { return nil, errors.New("no") }},
	)
	var (
		mu      sync.Mutex
		started []string
	)
	if _, err := StartEvent.On(root, func(s Start) error {
		mu.Lock()
		defer mu.Unlock()
		started = append(started, s.CallID+":"+s.Tool)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	res := []*Result{r.Execute(t.Context(), &Call{ID: "1", Tool: "slow"})}
	res = append(res, r.ExecuteBatch(t.Context(), []*Call{
		{ID: "2", Tool: "slowpar"}, {ID: "3", Tool: "nope"}, {ID: "4", Tool: "fail"},
	})...)
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	res = append(res, r.ExecuteBatch(cancelled, []*Call{{ID: "5", Tool: "slow"}})...)

	want := []string{"1:slow", "2:slowpar", "3:nope", "4:fail", "5:slow"}
	mu.Lock()
	got := slices.Clone(started)
	mu.Unlock()
	if !slices.Equal(got, want) {
		t.Errorf("tools/start: %q, want %q", got, want)
	}
	for i, want := range []struct {
		code string
		slow bool
	}{{"OK", true}, {"OK", true}, {CodeUnknownTool, false}, {"ERROR", false}, {CodeAbortedBeforeDispatch, false}} {
		if got := res[i].Code(); got != want.code {
			t.Errorf("call %s: Code() = %q, want %q", res[i].CallID, got, want.code)
		}
		if slept := res[i].Duration >= nap; slept != want.slow || res[i].Duration <= 0 {
			t.Errorf("call %s: Duration %v, want >= %v: %v", res[i].CallID, res[i].Duration, nap, want.slow)
		}
	}
}
