package loader_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// failing is a catalogue whose "picky" plugin fails to apply unless its
// greeting is "ok".
func failing(t testing.TB, rec *recorder) *loader.Catalog {
	t.Helper()
	cat := plugins(t, rec)
	picky := runtime.Configured("picky", func(_ *runtime.Context, c Config) error {
		if c.Greeting != "ok" {
			return errors.New("greeting " + c.Greeting + " refused")
		}
		rec.add("apply picky")
		return nil
	})
	if err := cat.Register(picky); err != nil {
		t.Fatal(err)
	}
	return cat
}

// An entry that fails to apply at Open fails the Open, naming the entry
// and its place, and nothing stays plugged: a process that starts from a
// file does not run with part of it.
func TestOpenApplyFailureUndoesOpen(t *testing.T) {
	rec := &recorder{}
	file := write(t, filepath.Join(t.TempDir(), "gordis.yaml"), "- {id: a, name: counter, config: {greeting: a}}\n- {id: p, name: picky, config: {greeting: no}}\n")
	root := runtimetest.New(t)
	l, err := loader.Open(root, file, failing(t, rec))
	want := file + `:2:32: entry "p" (picky): greeting no refused`
	if l != nil || err == nil || err.Error() != want {
		t.Fatalf("got %v, %v; want %s", l, err, want)
	}
	expect(t, rec, "apply counter a 0", "dispose counter a")
	if n := len(root.Plugins()); n != 0 {
		t.Fatalf("%d plugins applied", n)
	}
}

// An entry that waits for a service an entry below it provides, and then
// fails, fails the Open too.
func TestOpenDeferredApplyFailure(t *testing.T) {
	rec := &recorder{}
	file := write(t, filepath.Join(t.TempDir(), "gordis.yaml"), "- {id: p, name: picky, inject: [store], config: {greeting: no}}\n- {id: s, name: store, config: {greeting: s}}\n")
	root := runtimetest.New(t)
	l, err := loader.Open(root, file, failing(t, rec))
	want := file + `:1:49: entry "p" (picky): greeting no refused`
	if l != nil || err == nil || err.Error() != want {
		t.Fatalf("got %v, %v; want %s", l, err, want)
	}
	if n := len(root.Plugins()); n != 0 {
		t.Fatalf("%d plugins applied", n)
	}
}

// A reload applies the whole difference and returns what failed, with
// the place of each entry; the failed entry stays in the loader's hands, so
// the next reload that fixes its config tries it again.
func TestReloadApplyFailureReported(t *testing.T) {
	rec := &recorder{}
	file := write(t, filepath.Join(t.TempDir(), "gordis.yaml"), "- {id: a, name: counter, config: {greeting: a}}\n")
	l, err := loader.Open(runtimetest.New(t), file, failing(t, rec))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rec.take()
	write(t, file, "- {id: a, name: counter, config: {greeting: b}}\n- {id: p, name: picky, config: {greeting: no}}\n")
	err = l.Reload()
	if want := file + `:2:32: entry "p" (picky): greeting no refused`; err == nil || err.Error() != want {
		t.Fatalf("Reload: %v\nwant %s", err, want)
	}
	var e *loader.Error
	if !errors.As(err, &e) || e.ID != "p" || e.Line != 2 {
		t.Fatalf("not a *loader.Error of p: %#v", err)
	}
	expect(t, rec, "dispose counter a", "apply counter b 0")
	if f := l.Fiber("p"); f == nil || f.State() != runtime.Failed {
		t.Fatalf("p: %v", f)
	}

	rewrite(t, l, file, "- {id: a, name: counter, config: {greeting: b}}\n- {id: p, name: picky, config: {greeting: ok}}\n")
	expect(t, rec, "apply picky")
	if got := l.Fiber("p").State(); got != runtime.Active {
		t.Fatalf("p is %v after the fix", got)
	}

	// An update that fails is reported at the entry too.
	write(t, file, "- {id: a, name: counter, config: {greeting: b}}\n- {id: p, name: picky, config: {greeting: again}}\n")
	err = l.Reload()
	if want := file + `:2:32: entry "p" (picky): greeting again refused`; err == nil || err.Error() != want {
		t.Fatalf("Reload: %v\nwant %s", err, want)
	}
}

// An entry that failed is tried again by the next reload even when its
// config did not change: what it needed (a directory, say) may be there
// now, and a reload is how the user says so.
func TestReloadRetriesFailedEntry(t *testing.T) {
	rec := &recorder{}
	cat := plugins(t, rec)
	dir := filepath.Join(t.TempDir(), "work")
	needs := runtime.Configured("needs", func(_ *runtime.Context, c Config) error {
		if _, err := os.Stat(c.Greeting); err != nil {
			return err
		}
		rec.add("apply needs")
		return nil
	})
	if err := cat.Register(needs); err != nil {
		t.Fatal(err)
	}
	file := write(t, filepath.Join(t.TempDir(), "gordis.yaml"), "[]\n")
	l, err := loader.Open(runtimetest.New(t), file, cat)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	write(t, file, "- {id: n, name: needs, config: {greeting: "+dir+"}}\n")
	if err := l.Reload(); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Reload: %v", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := l.Reload(); err != nil {
		t.Fatal(err)
	}
	expect(t, rec, "apply needs")
	if got := l.Fiber("n").State(); got != runtime.Active {
		t.Fatalf("n is %v", got)
	}
	if err := l.Reload(); err != nil { // and an active one is left alone
		t.Fatal(err)
	}
	expect(t, rec)
}

// A config an OnUpdate refuses leaves the entry on its old config, so the
// next reload offers the file's config again and says so again, rather than
// taking the refusal as applied.
func TestReloadRetriesRefusedUpdate(t *testing.T) {
	rec := &recorder{}
	cat := plugins(t, rec)
	fussy := runtime.Configured("fussy", func(ctx *runtime.Context, c Config) error {
		rec.add("apply fussy %s", c.Greeting)
		return ctx.OnUpdate(func(config any) error {
			if g := config.(Config).Greeting; g != "ok" {
				return errors.New("greeting " + g + " refused")
			}
			rec.add("update fussy ok")
			return nil
		})
	})
	if err := cat.Register(fussy); err != nil {
		t.Fatal(err)
	}
	file := write(t, filepath.Join(t.TempDir(), "gordis.yaml"), "- {id: f, name: fussy, config: {greeting: a}}\n")
	l, err := loader.Open(runtimetest.New(t), file, cat)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	expect(t, rec, "apply fussy a")
	write(t, file, "- {id: f, name: fussy, config: {greeting: no}}\n")
	want := file + `:1:32: entry "f" (fussy): greeting no refused`
	for range 2 {
		if err := l.Reload(); err == nil || err.Error() != want {
			t.Fatalf("Reload: %v\nwant %s", err, want)
		}
	}
	rewrite(t, l, file, "- {id: f, name: fussy, config: {greeting: ok}}\n")
	expect(t, rec, "update fussy ok")
}
