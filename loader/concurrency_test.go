package loader_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gordis-run/gordis/runtime"
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
