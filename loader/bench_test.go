package loader_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// file50 is 50 entries, a mix of the kinds a deployment has; limit is
// entry 23's config.
func file50(limit int) string {
	var b strings.Builder
	for i := range 50 {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "- id: e%d\n  name: live\n  config: {greeting: g%d, limit: %d}\n", i, i, 1)
		case 1:
			fmt.Fprintf(&b, "- id: e%d\n  name: plain\n", i)
		case 2:
			fmt.Fprintf(&b, "- id: e%d\n  name: group\n  isolate: {store: true}\n  config:\n    - {id: e%ds, name: store, config: {greeting: s%d}}\n", i, i, i)
		default:
			n := 1
			if i == 23 {
				n = limit
			}
			fmt.Fprintf(&b, "- id: e%d\n  name: counter\n  config:\n    greeting: g%d\n    limit: %d\n    roots: [{path: a}, {path: b, readOnly: true}]\n", i, i, n)
		}
	}
	return b.String()
}

// A reload of 50 entries where one config changed touches that fiber only.
func TestReload50TouchesOnlyTheChangedFiber(t *testing.T) {
	rec := &recorder{}
	file := write(t, filepath.Join(t.TempDir(), "gordis.yaml"), file50(1))
	root := runtimetest.New(t)
	l, err := loader.Open(root, file, plugins(t, rec))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rec.take()
	changes := 0
	if _, err := runtime.StatusEvent.On(root, func(runtime.StatusChange) error { changes++; return nil }); err != nil {
		t.Fatal(err)
	}
	rewrite(t, l, file, file50(2))
	expect(t, rec, "dispose counter g23", "apply counter g23 2")
	// ACTIVE → UNLOADING → PENDING → LOADING → ACTIVE, one fiber.
	if changes != 4 {
		t.Fatalf("%d state changes, want 4", changes)
	}
}

// BenchmarkReload50 reloads a 50-entry file in which one entry's config
// changed each time (read, parse, validate, diff, restart that fiber).
func BenchmarkReload50(b *testing.B) {
	file := write(b, filepath.Join(b.TempDir(), "gordis.yaml"), file50(1))
	root := runtimetest.New(b)
	l, err := loader.Open(root, file, plugins(b, &recorder{}))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	texts := []string{file50(2), file50(1)}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		write(b, file, texts[i%2])
		b.StartTimer()
		if err := l.Reload(); err != nil {
			b.Fatal(err)
		}
	}
}
