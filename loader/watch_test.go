package loader_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// waitFor polls rec until it has recorded want, in order, or fails.
func waitFor(t *testing.T, rec *recorder, want ...string) {
	t.Helper()
	var got []string
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		got = append(got, rec.take()...)
		if len(got) >= len(want) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// An editor saves by writing a temporary file and renaming it over the
// config: the watch on the directory sees it, a file that does not
// validate changes nothing, and the next good save applies.
func TestWatchEditorRename(t *testing.T) {
	l, rec, file := setup(t, "- {id: a, name: counter, config: {greeting: a}}\n")
	rec.take()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := l.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	save := func(text string) {
		tmp := filepath.Join(filepath.Dir(file), ".gordis.yaml.swp")
		write(t, tmp, text)
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
	}
	save("- {id: a, name: counter, config: {greeting: b}}\n")
	waitFor(t, rec, "dispose counter a", "apply counter b 0")

	save("- {id: a, name: counter, config: {greeting: c, limit: -1}}\n")
	time.Sleep(300 * time.Millisecond)
	expect(t, rec)

	write(t, file, "- {id: a, name: counter, config: {greeting: d}}\n") // in place, too
	waitFor(t, rec, "dispose counter b", "apply counter d 0")

	cancel()
	time.Sleep(100 * time.Millisecond)
	save("- {id: a, name: counter, config: {greeting: e}}\n")
	time.Sleep(300 * time.Millisecond)
	expect(t, rec)
}
