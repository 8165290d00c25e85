package loader_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/runtime/runtimetest"
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

// A Kubernetes ConfigMap volume: the file is a link through "..data", a
// link to a directory of the current files, and an update swaps "..data".
func TestWatchConfigMapSwap(t *testing.T) {
	dir := t.TempDir()
	version := func(name, text string) {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, name, "gordis.yaml"), text)
	}
	version("v1", "- {id: a, name: counter, config: {greeting: one}}\n")
	for _, link := range [][2]string{{"v1", "..data"}, {"..data/gordis.yaml", "gordis.yaml"}} {
		if err := os.Symlink(link[0], filepath.Join(dir, link[1])); err != nil {
			t.Fatal(err)
		}
	}
	rec := &recorder{}
	root := runtimetest.New(t)
	l, err := loader.Open(root, filepath.Join(dir, "gordis.yaml"), plugins(t, rec))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Watch(context.Background()); err != nil {
		t.Fatal(err)
	}
	expect(t, rec, "apply counter one 0")
	version("v2", "- {id: a, name: counter, config: {greeting: two}}\n")
	if err := os.Symlink("v2", filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, rec, "dispose counter one", "apply counter two 0")
}
