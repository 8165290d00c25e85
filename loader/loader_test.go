package loader_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

func TestEntriesEnabledAndDisabled(t *testing.T) {
	l, rec, _ := setup(t, `
- id: a
  name: counter
  config: {greeting: a}
- id: b
  name: counter
  disabled: true
  config: {greeting: b}
- id: c
  name: plain
`)
	expect(t, rec, "apply counter a 0", "apply plain")
	if l.Fiber("a") == nil || l.Fiber("b") != nil || l.Fiber("c") == nil {
		t.Fatalf("fibers: a %v, b %v, c %v", l.Fiber("a"), l.Fiber("b"), l.Fiber("c"))
	}
	if got := l.Fiber("a").State(); got != runtime.Active {
		t.Fatalf("a is %v", got)
	}
}

func TestReloadTouchesOnlyWhatChanged(t *testing.T) {
	l, rec, file := setup(t, `
- id: a
  name: counter
  config: {greeting: a}
- id: b
  name: live
  config: {greeting: b}
- id: c
  name: counter
  config: {greeting: c}
- id: d
  name: counter
  config: {greeting: d}
`)
	rec.take()
	a, d := l.Fiber("a"), l.Fiber("d")
	// a: unchanged but spelt differently; b: in place; c: restarted; d: removed; e: new.
	rewrite(t, l, file, `
- id: a
  name: counter
  config:
    greeting: "a"
- id: e
  name: counter
  config: {greeting: e}
- id: b
  name: live
  config: {greeting: b, limit: 2}
- id: c
  name: counter
  config: {greeting: c, limit: 3}
`)
	expect(t, rec,
		"dispose counter d",
		"apply counter e 0",
		"update live b 2",
		"dispose counter c",
		"apply counter c 3",
	)
	if l.Fiber("a") != a || d.State() != runtime.Disposed || l.Fiber("d") != nil {
		t.Fatalf("a kept: %v, d: %v", l.Fiber("a") == a, d.State())
	}
	// Nothing changed: nothing happens.
	if err := l.Reload(); err != nil {
		t.Fatal(err)
	}
	expect(t, rec)
}

func TestDisableAndEnable(t *testing.T) {
	l, rec, file := setup(t, `
- id: a
  name: counter
  config: {greeting: a}
- id: b
  name: counter
  config: {greeting: b}
`)
	rec.take()
	rewrite(t, l, file, `
- id: a
  name: counter
  config: {greeting: a}
  disabled: true
- id: b
  name: counter
  config: {greeting: b}
  disabled: true
`)
	expect(t, rec, "dispose counter b", "dispose counter a")
	rewrite(t, l, file, `
- id: a
  name: counter
  config: {greeting: a}
- id: b
  name: counter
  config: {greeting: b}
  disabled: false
`)
	expect(t, rec, "apply counter a 0", "apply counter b 0")
}

// groups is a file with a group g holding a and the group inner, which
// holds b and c, and d after g; off lists the entries with disabled: true.
func groups(off ...string) string {
	flag := func(id string) string {
		if slices.Contains(off, id) {
			return ", disabled: true"
		}
		return ""
	}
	return fmt.Sprintf(`
- id: g
  name: group
  disabled: %v
  config:
    - {id: a, name: counter, config: {greeting: a}%s}
    - id: inner
      name: group
      config:
        - {id: b, name: counter, config: {greeting: b}%s}
        - {id: c, name: counter, config: {greeting: c}%s}
- {id: d, name: counter, config: {greeting: d}}
`, slices.Contains(off, "g"), flag("a"), flag("b"), flag("c"))
}

func TestGroups(t *testing.T) {
	l, rec, file := setup(t, groups("c"))
	expect(t, rec, "apply counter a 0", "apply counter b 0", "apply counter d 0")
	if l.Fiber("g").Name() != "group" || l.Fiber("b").Parent().Fiber() != l.Fiber("inner") {
		t.Fatal("b is not below its group")
	}
	// Enable c inside the inner group, disable a.
	rewrite(t, l, file, groups("a"))
	expect(t, rec, "dispose counter a", "apply counter c 0")
	// Disabling the group disposes everything in it, newest first.
	rewrite(t, l, file, groups("g"))
	expect(t, rec, "dispose counter c", "dispose counter b")
	for _, id := range []string{"g", "a", "inner", "b", "c"} {
		if l.Fiber(id) != nil {
			t.Errorf("%s still plugged", id)
		}
	}
	if l.Fiber("d") == nil {
		t.Error("d was disposed")
	}
	// Enabling it again plugs what is enabled in it.
	rewrite(t, l, file, groups("b"))
	expect(t, rec, "apply counter a 0", "apply counter c 0")
}

func TestMoveKeepsFiberWithinItsParent(t *testing.T) {
	l, rec, file := setup(t, `
- id: a
  name: counter
  config: {greeting: a}
- id: b
  name: counter
  config: {greeting: b}
- id: g
  name: group
  config: []
`)
	rec.take()
	a := l.Fiber("a")
	rewrite(t, l, file, `
- id: b
  name: counter
  config: {greeting: b}
- id: a
  name: counter
  config: {greeting: a}
- id: g
  name: group
  config:
    - id: moved
      name: counter
      config: {greeting: moved}
`)
	expect(t, rec, "apply counter moved 0")
	if l.Fiber("a") != a {
		t.Fatal("a was re-plugged")
	}
	// Into another group: the fiber moves to the group's context, so it is
	// disposed and plugged again there.
	rewrite(t, l, file, `
- id: a
  name: counter
  config: {greeting: a}
- id: g
  name: group
  config:
    - id: moved
      name: counter
      config: {greeting: moved}
    - id: b
      name: counter
      config: {greeting: b}
`)
	expect(t, rec, "dispose counter b", "apply counter b 0")
	if l.Fiber("b").Parent().Fiber() != l.Fiber("g") {
		t.Fatal("b is not in g")
	}
}

func TestIsolateRealms(t *testing.T) {
	l, rec, file := setup(t, `
- id: left
  name: group
  isolate: {store: true}
  config:
    - {id: s1, name: store, config: {greeting: left}}
    - {id: r1, name: reader, config: {greeting: r1}}
- id: right
  name: group
  isolate: {store: true}
  config:
    - {id: s2, name: store, config: {greeting: right}}
    - {id: r2, name: reader, config: {greeting: r2}}
- {id: s3, name: store, isolate: {store: shared}, config: {greeting: shared}}
- {id: r3, name: reader, isolate: {store: shared}, config: {greeting: r3}}
- {id: r4, name: reader, config: {greeting: r4}}
`)
	expect(t, rec,
		"apply store left", "reader r1 sees left (greeting r1)",
		"apply store right", "reader r2 sees right (greeting r2)",
		"apply store shared", "reader r3 sees shared (greeting r3)",
	)
	if got := l.Fiber("r4").State(); got != runtime.Pending {
		t.Fatalf("r4, outside every realm, is %v", got)
	}
	// A store for everyone else: only r4 sees it.
	rewrite(t, l, file, read(t, file)+"- {id: s4, name: store, config: {greeting: common}}\n")
	expect(t, rec, "apply store common", "reader r4 sees common (greeting r4)")
}

// An entry's inject, and its group's, hold it PENDING until a provider
// comes, here with a reload.
func TestInjectPendingThenResolved(t *testing.T) {
	l, rec, file := setup(t, `
- id: waits
  name: counter
  inject: [store]
  config: {greeting: w}
- id: g
  name: group
  inject: [store]
  config:
    - {id: inner, name: counter, config: {greeting: inner}}
`)
	expect(t, rec)
	if a, b, g := l.Fiber("waits").State(), l.Fiber("inner").State(), l.Fiber("g").State(); a != runtime.Pending || b != runtime.Pending || g != runtime.Active {
		t.Fatalf("waits %v, inner %v, g %v", a, b, g)
	}
	rewrite(t, l, file, read(t, file)+"- {id: s, name: store, config: {greeting: s}}\n")
	expect(t, rec, "apply store s", "apply counter w 0", "apply counter inner 0")
}

func TestIntercept(t *testing.T) {
	_, rec, _ := setup(t, `
- {id: s, name: store, config: {greeting: s}}
- id: g
  name: group
  intercept: {store: {greeting: from-group}}
  config:
    - {id: r1, name: reader, config: {greeting: r1}}
    - {id: r2, name: reader, intercept: {store: {greeting: nearest}}, config: {greeting: r2}}
- {id: r3, name: reader, config: {greeting: r3}}
`)
	expect(t, rec,
		"apply store s",
		"reader r1 sees s (greeting from-group)",
		"reader r2 sees s (greeting nearest)",
		"reader r3 sees s (greeting r3)",
	)
}

func TestInvalidFileChangesNothing(t *testing.T) {
	l, rec, file := setup(t, "- {id: a, name: counter, config: {greeting: a}}\n")
	rec.take()
	a := l.Fiber("a")
	write(t, file, `- id: a
  name: counter
  config: {greeting: a, limit: 2}
- id: b
  name: counter
  config:
    limit: 0
    roots: [{path: x}, {readonly: true}]
    extra: 1
- id: a
  name: countr
- {id: c, name: live, colour: red}
`)
	err := l.Reload()
	want := file + `:7:12: entry "b" (counter): "limit" must be a positive integer
` + file + `:8:24: entry "b" (counter): missing required property "roots[1].path"
` + file + `:8:25: entry "b" (counter): unknown property "roots[1].readonly" (did you mean "readOnly"?)
` + file + `:9:5: entry "b" (counter): unknown property "extra"
` + file + `:10:7: entry "a" (countr): duplicate id "a" (first at 1:7)
` + file + `:11:9: entry "a" (countr): unknown plugin "countr" (did you mean "counter"?)
` + file + `:12:23: entry "c" (live): unknown key "colour" (an entry has id, name, config, disabled, inject, isolate, intercept)`
	if err == nil || err.Error() != want {
		t.Fatalf("got:\n%v\nwant:\n%s", err, want)
	}
	var errs loader.Errors
	if !errors.As(err, &errs) || len(errs) != 7 || !errors.Is(err, loader.ErrUnknownPlugin) {
		t.Fatalf("errors: %#v", err)
	}
	expect(t, rec)
	if l.Fiber("a") != a || a.State() != runtime.Active {
		t.Fatal("the running tree changed")
	}
}

func TestParseError(t *testing.T) {
	l, rec, file := setup(t, "- {id: a, name: counter}\n")
	rec.take()
	write(t, file, "- id: a\n  name: [counter\n")
	err := l.Reload()
	if want := file + ":2: did not find expected ',' or ']'"; err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	expect(t, rec)
}

func TestOpenInvalidPlugsNothing(t *testing.T) {
	rec := &recorder{}
	file := write(t, filepath.Join(t.TempDir(), "gordis.yaml"), "- {id: a, name: counter}\n- {id: b, name: nope}\n")
	root := runtimetest.New(t)
	l, err := loader.Open(root, file, plugins(t, rec))
	want := file + `:2:17: entry "b" (nope): unknown plugin "nope" (known: "counter", "group", "live", "plain", "reader", "store")`
	if l != nil || err == nil || err.Error() != want {
		t.Fatalf("got %v, %v; want %s", l, err, want)
	}
	expect(t, rec)
	if n := len(root.Plugins()); n != 0 {
		t.Fatalf("%d plugins applied", n)
	}
}

func TestEnvExpansion(t *testing.T) {
	t.Setenv("GORDIS_TEST_GREETING", "hello")
	t.Setenv("GORDIS_TEST_EMPTY", "")
	l, rec, file := setup(t, `
- id: a
  name: counter
  config: {greeting: "${GORDIS_TEST_GREETING}, world"}
- id: b
  name: counter
  config: {greeting: "${GORDIS_TEST_UNSET:-fallback}"}
- id: c
  name: counter
  config: {greeting: "${GORDIS_TEST_EMPTY:-empty} $${LITERAL}"}
`)
	expect(t, rec, "apply counter hello, world 0", "apply counter fallback 0", "apply counter empty ${LITERAL} 0")
	// A change of the environment shows at the next reload.
	t.Setenv("GORDIS_TEST_GREETING", "bye")
	if err := l.Reload(); err != nil {
		t.Fatal(err)
	}
	expect(t, rec, "dispose counter hello, world", "apply counter bye, world 0")
	write(t, file, "- {id: a, name: counter, config: {greeting: '${GORDIS_TEST_UNSET}'}}\n")
	want := file + `:1:45: entry "a" (counter): environment variable GORDIS_TEST_UNSET is not set (${GORDIS_TEST_UNSET:-default} gives a default)`
	if err := l.Reload(); err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

func TestOverrideWinsAfterReload(t *testing.T) {
	rec := &recorder{}
	file := write(t, filepath.Join(t.TempDir(), "gordis.yaml"), `
- {id: a, name: counter, config: {greeting: file, limit: 1}}
- {id: b, name: counter}
- {id: p, name: plain}
`)
	root := runtimetest.New(t)
	var seen []string
	l, err := loader.Open(root, file, plugins(t, rec), loader.WithOverride(func(id, name string, config map[string]any) error {
		seen = append(seen, id+":"+name)
		if name == "counter" {
			config["greeting"] = "flag"
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	expect(t, rec, "apply counter flag 1", "apply counter flag 0", "apply plain")
	if strings.Join(seen, " ") != "a:counter b:counter p:plain" {
		t.Fatalf("override saw %v", seen)
	}
	rewrite(t, l, file, `
- {id: a, name: counter, config: {greeting: changed, limit: 1}}
- {id: b, name: counter, config: {limit: 2}}
- {id: p, name: plain}
`)
	expect(t, rec, "dispose counter flag", "apply counter flag 2")
}

func TestCloseDisposesNewestFirst(t *testing.T) {
	l, rec, _ := setup(t, `
- {id: a, name: counter, config: {greeting: a}}
- id: g
  name: group
  config:
    - {id: b, name: counter, config: {greeting: b}}
- {id: c, name: counter, config: {greeting: c}}
`)
	rec.take()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	expect(t, rec, "dispose counter c", "dispose counter b", "dispose counter a")
	for _, id := range []string{"a", "g", "b", "c"} {
		if f := l.Fiber(id); f != nil {
			t.Errorf("Fiber(%s) after Close = %v, want nil", id, f)
		}
	}
	if err := l.Reload(); !errors.Is(err, loader.ErrClosed) {
		t.Fatalf("Reload after Close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// A root closed under the loader disposes its entries without writing
// them as disabled, and the loader is closed with it.
func TestRootClosedUnderLoader(t *testing.T) {
	rec := &recorder{}
	text := "- {id: a, name: counter, config: {greeting: a}}\n"
	file := write(t, filepath.Join(t.TempDir(), "gordis.yaml"), text)
	root := runtime.New()
	l, err := loader.Open(root, file, plugins(t, rec))
	if err != nil {
		t.Fatal(err)
	}
	if err := root.Close(); err != nil {
		t.Fatal(err)
	}
	expect(t, rec, "apply counter a 0", "dispose counter a")
	if got := read(t, file); got != text {
		t.Fatalf("the file changed:\n%s", got)
	}
	if err := l.Reload(); !errors.Is(err, loader.ErrClosed) {
		t.Fatalf("Reload: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// Moving a group to another label moves its store to that label's realm:
// the reader of the old label waits again, the reader of the new one
// gets it.
func TestIsolateLabelChange(t *testing.T) {
	l, rec, file := setup(t, `
- {id: alpha, name: reader, isolate: {store: alpha}, config: {greeting: alpha}}
- {id: beta, name: reader, isolate: {store: beta}, config: {greeting: beta}}
- id: g
  name: group
  isolate: {store: alpha}
  config:
    - {id: s, name: store, config: {greeting: s}}
`)
	expect(t, rec, "apply store s", "reader alpha sees s (greeting alpha)")
	rewrite(t, l, file, strings.Replace(read(t, file), "isolate: {store: alpha}\n", "isolate: {store: beta}\n", 1))
	expect(t, rec, "apply store s", "reader beta sees s (greeting beta)")
	if a, b := l.Fiber("alpha").State(), l.Fiber("beta").State(); a != runtime.Pending || b != runtime.Active {
		t.Fatalf("alpha %v, beta %v", a, b)
	}
}
