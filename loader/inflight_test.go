package loader_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// A tool call in flight while its plugin's entry is restarted with a new
// config, then removed: the reload does not wait for the call, the call
// completes with the config it started with, and the calls after it see
// the file as it is now.
func TestCallsInFlightAcrossReload(t *testing.T) {
	started := make(chan string)
	release := make(chan struct{})
	slow := runtime.Configured("slow", func(ctx *runtime.Context, c Config) error {
		tools, err := registry.Tools.Get(ctx)
		if err != nil {
			return err
		}
		return tools.Register(ctx, registry.Tool{
			Name: "slow",
			Execute: func(ctx context.Context, _ *registry.Call) (any, error) {
				started <- c.Greeting
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return "done " + c.Greeting, nil
			},
		})
	}, runtime.Inject(registry.Tools))
	cat, err := loader.NewCatalog(registry.Plugin, slow)
	if err != nil {
		t.Fatal(err)
	}
	file := write(t, filepath.Join(t.TempDir(), "gordis.yaml"), "- {id: registry, name: registry}\n- {id: s, name: slow, config: {greeting: one}}\n")
	root := runtimetest.New(t)
	l, err := loader.Open(root, file, cat)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tools, ok := registry.Tools.Lookup(root)
	if !ok {
		t.Fatal("no tools service")
	}
	call := func() <-chan *registry.Result {
		out := make(chan *registry.Result, 1)
		go func() { out <- tools.Execute(context.Background(), &registry.Call{ID: "c", Tool: "slow"}) }()
		return out
	}
	reload := func(text string) {
		t.Helper()
		write(t, file, text)
		done := make(chan error, 1)
		go func() { done <- l.Reload() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the reload waits for the call in flight")
		}
	}
	result := func(res <-chan *registry.Result, want string) {
		t.Helper()
		select {
		case r := <-res:
			if r.Text != want {
				t.Fatalf("call: %q (%v), want %q", r.Text, r.Error, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the call hangs")
		}
	}

	first := call()
	if got := <-started; got != "one" {
		t.Fatalf("started with %q", got)
	}
	reload("- {id: registry, name: registry}\n- {id: s, name: slow, config: {greeting: two}}\n")
	second := call()
	if got := <-started; got != "two" {
		t.Fatalf("a call after the update started with %q", got)
	}
	release <- struct{}{}
	release <- struct{}{}
	result(first, "done one")
	result(second, "done two")

	third := call()
	<-started
	reload("- {id: registry, name: registry}\n")
	close(release)
	result(third, "done two")
	res := tools.Execute(context.Background(), &registry.Call{ID: "d", Tool: "slow"})
	if res.Code() != "TOOL_UNAVAILABLE" {
		t.Fatalf("a call after the removal: %q (%s)", res.Text, res.Code())
	}
}
