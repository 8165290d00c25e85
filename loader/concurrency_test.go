package loader_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// Reloads of changing files, plugins updating themselves, the watcher and
// Close all at once: no race, no deadlock, and nothing left plugged.
func TestConcurrentReloadsAndClose(t *testing.T) {
	l, _, file := setup(t, entries(8, 0))
	if err := l.Watch(context.Background()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				if g == 0 {
					write(t, file, entries(8, i%3))
				}
				_ = l.Reload()
				if f := l.Fiber(fmt.Sprintf("e%d", i%8)); f != nil {
					_ = f.Update(Config{Greeting: "self", Limit: i + 1})
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = l.Close()
	}()
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		if f := l.Fiber(fmt.Sprintf("e%d", i)); f != nil && f.State() != runtime.Disposed {
			t.Fatalf("e%d is %v after Close", i, f.State())
		}
	}
}

// entries is a file of n counters; variant changes some configs and
// disables one entry.
func entries(n, variant int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "- id: e%d\n  name: %s\n  config: {greeting: g%d, limit: %d}\n", i, []string{"counter", "live"}[i%2], i, 1+(i+variant)%3)
		if variant == 2 && i == 3 {
			b.WriteString("  disabled: true\n")
		}
	}
	return b.String()
}

// While a reload waits in a plugin's apply, the loader's other entries
// stay usable: a lookup answers and another plugin's own update is applied
// and written back.
func TestReloadHoldsNoLockWhilePluginsRun(t *testing.T) {
	rec := &recorder{}
	cat := plugins(t, rec)
	entered, release := make(chan struct{}), make(chan struct{})
	gate := runtime.Configured("gate", func(ctx *runtime.Context, c Config) error {
		if c.Greeting == "wait" {
			close(entered)
			<-release
		}
		return nil
	})
	if err := cat.Register(gate); err != nil {
		t.Fatal(err)
	}
	file := write(t, filepath.Join(t.TempDir(), "gordis.yaml"), "- {id: a, name: counter, config: {greeting: a}}\n- {id: g, name: gate}\n")
	l, err := loader.Open(runtimetest.New(t), file, cat)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	write(t, file, "- {id: a, name: counter, config: {greeting: a}}\n- {id: g, name: gate, config: {greeting: wait}}\n")
	reloaded := make(chan error, 1)
	go func() { reloaded <- l.Reload() }()
	<-entered
	done := make(chan error, 1)
	go func() { done <- l.Fiber("a").Update(Config{Greeting: "a", Limit: 5}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the update waited for the reload")
	}
	want := "- {id: a, name: counter, config: {greeting: a, limit: 5}}\n- {id: g, name: gate, config: {greeting: wait}}\n"
	if got := read(t, file); got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	close(release)
	if err := <-reloaded; err != nil {
		t.Fatal(err)
	}
}
