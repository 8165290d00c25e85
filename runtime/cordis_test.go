package runtime_test

import (
	"fmt"
	"testing"

	"github.com/gordis-run/gordis/runtime"
)

// The scenarios in this file come from Cordis's own test suite, where
// gordis used to behave differently.

// A dependent whose service goes away while its apply runs is never
// reported ACTIVE: it goes LOADING, UNLOADING, PENDING, with everything the
// apply registered torn down, and applies again when a provider returns.
func TestServiceLostDuringApply(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("lost-during-apply")
	prov := mustPlugin(t, root, provider("local", "first"), nil)
	log := statusLog(t, root, "dep")
	var hits int
	dep := mustPlugin(t, root, runtime.Func("dep", func(ctx *runtime.Context) error {
		if _, err := ev.On(ctx, func(int) error { hits++; return nil }); err != nil {
			return err
		}
		if prov != nil {
			return prov.Dispose() // the provider leaves while dep is LOADING
		}
		return nil
	}, runtime.Inject(FS)), nil)
	equal(t, "statuses", log.list(), []string{"LOADING", "UNLOADING", "PENDING"})
	if err := dep.Wait(); err != nil || dep.State() != runtime.Pending {
		t.Fatalf("dep: %v, %v", dep.State(), err)
	}
	if _ = ev.Emit(root, 1); hits != 0 {
		t.Fatalf("the unloaded application's listener ran %d times", hits)
	}
	log.reset()
	prov = nil
	mustPlugin(t, root, provider("local", "second"), nil)
	equal(t, "statuses after a new provider", log.list(), []string{"LOADING", "ACTIVE"})
	if d, err := FS.Get(dep.Context()); err != nil || d.label != "second" {
		t.Fatalf("Get: %v, %v", d, err)
	}
}

// A provider that restarts while a dependent applies hands the dependent a
// new record: the application against the old one does not stand, and the
// dependent applies again against the new one.
func TestProviderRestartDuringApply(t *testing.T) {
	root, _ := newRoot(t)
	var n int
	prov := mustPlugin(t, root, runtime.Func("local", func(ctx *runtime.Context) error {
		n++
		return FS.Provide(ctx, &disk{fmt.Sprint("generation ", n)})
	}), nil)
	log := statusLog(t, root, "dep")
	var applies []string
	dep := mustPlugin(t, root, runtime.Func("dep", func(ctx *runtime.Context) error {
		d, err := FS.Get(ctx)
		if err != nil {
			return err
		}
		applies = append(applies, d.label)
		if len(applies) == 1 {
			return prov.Restart()
		}
		return nil
	}, runtime.Inject(FS)), nil)
	equal(t, "statuses", log.list(), []string{"LOADING", "UNLOADING", "PENDING", "LOADING", "ACTIVE"})
	equal(t, "applies", applies, []string{"generation 1", "generation 2"})
	if dep.State() != runtime.Active {
		t.Fatalf("dep: %v", dep.State())
	}
}
