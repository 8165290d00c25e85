package loader_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

func TestSelfUpdateWrittenBack(t *testing.T) {
	t.Setenv("GORDIS_TEST_ROOT", "src")
	l, rec, file := setup(t, `# the deployment
- id: a            # first
  name: counter
  config:
    greeting: a    # kept
    limit: 1
    roots: [{path: "${GORDIS_TEST_ROOT}"}]

# the second
- id: b
  name: live
  config: {greeting: b}
`)
	rec.take()
	// The plugins change their own configs, as a plugin holding its fiber does.
	if err := l.Fiber("a").Update(Config{Greeting: "a", Limit: 7, Roots: []Root{{Path: "src"}}}); err != nil {
		t.Fatal(err)
	}
	if err := l.Fiber("b").Update(Config{Greeting: "b", Limit: 2}); err != nil {
		t.Fatal(err)
	}
	expect(t, rec, "dispose counter a", "apply counter a 7", "update live b 2")
	want := `# the deployment
- id: a            # first
  name: counter
  config:
    greeting: a    # kept
    limit: 7
    roots: [{path: "${GORDIS_TEST_ROOT}"}]

# the second
- id: b
  name: live
  config: {greeting: b, limit: 2}
`
	if got := read(t, file); got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	// The reload the write causes finds nothing to do.
	if err := l.Reload(); err != nil {
		t.Fatal(err)
	}
	expect(t, rec)
}

func TestSelfDisposeWrittenBack(t *testing.T) {
	l, rec, file := setup(t, `- id: a
  name: counter   # stays
  config: {greeting: a}
- id: g
  name: group
  config:
    - {id: b, name: counter, config: {greeting: b}}
    - {id: c, name: counter, config: {greeting: c}}
`)
	rec.take()
	if err := l.Fiber("a").Dispose(); err != nil {
		t.Fatal(err)
	}
	if err := l.Fiber("b").Dispose(); err != nil {
		t.Fatal(err)
	}
	expect(t, rec, "dispose counter a", "dispose counter b")
	want := `- id: a
  name: counter   # stays
  config: {greeting: a}
  disabled: true
- id: g
  name: group
  config:
    - {id: b, name: counter, config: {greeting: b}, disabled: true}
    - {id: c, name: counter, config: {greeting: c}}
`
	if got := read(t, file); got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	if err := l.Reload(); err != nil {
		t.Fatal(err)
	}
	expect(t, rec)
	// A group that disposes itself is disabled; its entries are not.
	if err := l.Fiber("g").Dispose(); err != nil {
		t.Fatal(err)
	}
	expect(t, rec, "dispose counter c")
	want = `- id: a
  name: counter   # stays
  config: {greeting: a}
  disabled: true
- id: g
  name: group
  config:
    - {id: b, name: counter, config: {greeting: b}, disabled: true}
    - {id: c, name: counter, config: {greeting: c}}
  disabled: true
`
	if got := read(t, file); got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
}

func TestGeneratedIDsWrittenBack(t *testing.T) {
	l, rec, file := setup(t, `# no ids
- name: counter
  config: {greeting: a}
- name: group
  config:
    - name: counter   # inside
      config: {greeting: b}
`)
	expect(t, rec, "apply counter a 0", "apply counter b 0")
	want := `# no ids
- id: counter-fd5e
  name: counter
  config: {greeting: a}
- id: group-5c26
  name: group
  config:
    - id: counter-e184
      name: counter   # inside
      config: {greeting: b}
`
	if got := read(t, file); got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	if err := l.Reload(); err != nil {
		t.Fatal(err)
	}
	expect(t, rec)
}

// A plugin whose entry has no config writes one; a key it drops is deleted.
func TestSelfUpdateWithoutConfigInFile(t *testing.T) {
	l, rec, file := setup(t, `- id: a
  name: counter
- id: b
  name: plain
- id: c
  name: counter
  config:
    greeting: c
    limit: 4 # goes
`)
	rec.take()
	if err := l.Fiber("a").Update(Config{Greeting: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Fiber("b").Update(map[string]any{"a": 3}); err != nil {
		t.Fatal(err)
	}
	if err := l.Fiber("c").Update(Config{Greeting: "c"}); err != nil {
		t.Fatal(err)
	}
	want := `- id: a
  name: counter
  config:
    greeting: x
- id: b
  name: plain
  config:
    a: 3
- id: c
  name: counter
  config:
    greeting: c
`
	if got := read(t, file); got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	if err := l.Reload(); err != nil {
		t.Fatal(err)
	}
	expect(t, rec, "dispose counter hi", "apply counter x 0", "apply plain", "dispose counter c", "apply counter c 0")
}

// A config file that is a link stays one: the write goes to its target.
func TestWriteBackThroughLink(t *testing.T) {
	dir := t.TempDir()
	target := write(t, filepath.Join(dir, "real.yaml"), "- {id: a, name: counter, config: {greeting: a}}\n")
	link := filepath.Join(dir, "gordis.yaml")
	if err := os.Symlink("real.yaml", link); err != nil {
		t.Fatal(err)
	}
	l, err := loader.Open(runtimetest.New(t), link, plugins(t, &recorder{}))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Fiber("a").Dispose(); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, target), "- {id: a, name: counter, config: {greeting: a}, disabled: true}\n"; got != want {
		t.Fatalf("target:\n%s\nwant:\n%s", got, want)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v, %v", fi.Mode(), err)
	}
}

// A plugin that drops every key: those in the file are deleted, a default
// that never was in it is passed over.
func TestSelfUpdateDropsKeys(t *testing.T) {
	l, rec, file := setup(t, `- id: a
  name: counter
  config:
    limit: 1
    roots:
      - path: x
  # after
`)
	rec.take()
	if err := l.Fiber("a").Update(Config{}); err != nil {
		t.Fatal(err)
	}
	want := `- id: a
  name: counter
  config: {}
  # after
`
	if got := read(t, file); got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	if err := l.Reload(); err != nil {
		t.Fatal(err)
	}
	expect(t, rec, "dispose counter hi", "apply counter hi 0")
}

// A key an override set is not in the file: when the plugin drops it,
// there is nothing to delete, and the rest is still written.
func TestSelfUpdateDropsOverriddenKey(t *testing.T) {
	text := "- {id: a, name: counter, config: {greeting: a}}\n"
	file := write(t, filepath.Join(t.TempDir(), "gordis.yaml"), text)
	l, err := loader.Open(runtimetest.New(t), file, plugins(t, &recorder{}), loader.WithOverride(func(_, _ string, c map[string]any) error {
		c["roots"] = []any{map[string]any{"path": "flag"}}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Fiber("a").Update(Config{Greeting: "b"}); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, file), "- {id: a, name: counter, config: {greeting: b}}\n"; got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
}
