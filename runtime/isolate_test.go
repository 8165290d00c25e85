package runtime_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/gordis-run/gordis/runtime"
)

// otherLabel has the same underlying value as a label but another type, as
// two packages' context keys would.
type otherLabel string

// Which isolated contexts share a domain: equal labels for one name do;
// different labels, no label, another label type or another name do not.
func TestIsolateLabels(t *testing.T) {
	cases := []struct {
		name   string
		second func(root *runtime.Context) *runtime.Context
		shared bool
	}{
		{"same label", func(root *runtime.Context) *runtime.Context { return root.Isolate(FS.Name(), label("L")) }, true},
		{"same label from a plugin's context", func(root *runtime.Context) *runtime.Context {
			f := mustPlugin(t, root, runtime.Func("holder", func(*runtime.Context) error { return nil }), nil)
			return f.Context().Isolate(FS.Name(), label("L"))
		}, true},
		{"different label", func(root *runtime.Context) *runtime.Context { return root.Isolate(FS.Name(), label("M")) }, false},
		{"no label", func(root *runtime.Context) *runtime.Context { return root.Isolate(FS.Name()) }, false},
		{"another label type", func(root *runtime.Context) *runtime.Context { return root.Isolate(FS.Name(), otherLabel("L")) }, false},
		{"the label for another name", func(root *runtime.Context) *runtime.Context {
			return root.Isolate("other", label("L"))
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, _ := newRoot(t)
			first := root.Isolate(FS.Name(), label("L"))
			mustPlugin(t, first, provider("local", "first"), nil)
			second := c.second(root)
			d, ok := FS.Lookup(second)
			if ok != c.shared || (ok && d.label != "first") {
				t.Fatalf("Lookup in the second context: %v, %v; want shared=%v", d, ok, c.shared)
			}
			if _, ok := FS.Lookup(root); ok {
				t.Fatal("the root sees a labelled domain's service")
			}
			// A second provider in a shared domain conflicts.
			dup := mustPlugin(t, second, provider("local-2", "second"), nil)
			if err := dup.Wait(); errors.Is(err, runtime.ErrServiceConflict) != c.shared {
				t.Fatalf("second provider: %v; want a conflict: %v", err, c.shared)
			}
		})
	}
}

// Isolate refuses labels that cannot name a domain, as Extend refuses keys.
func TestIsolateLabelPanics(t *testing.T) {
	root, _ := newRoot(t)
	cases := []struct {
		name   string
		labels []any
		msg    string
	}{
		{"nil", []any{nil}, "runtime: an Isolate label must be non-nil and comparable"},
		{"not comparable", []any{[]string{"L"}}, "runtime: an Isolate label must be non-nil and comparable"},
		{"holding a value that is not comparable", []any{struct{ v any }{[]int{1}}}, "runtime: an Isolate label must be non-nil and comparable"},
		{"two labels", []any{label("L"), label("M")}, "runtime: Isolate takes at most one label"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if p := recover(); p != c.msg {
					t.Fatalf("panic %v, want %q", p, c.msg)
				}
			}()
			root.Isolate(FS.Name(), c.labels...)
		})
	}
}

// Many goroutines isolating with one label at once meet in one domain:
// exactly one of their providers wins, and every context sees it.
func TestIsolateLabelConcurrently(t *testing.T) {
	for range 20 {
		root, _ := newRoot(t)
		const n = 8
		ctxs := make([]*runtime.Context, n)
		var wins sync.Map
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				ctxs[i] = root.Isolate(FS.Name(), label("race"))
				f, err := ctxs[i].Plugin(provider("local", "p"), nil)
				if err != nil {
					t.Error(err)
					return
				}
				if f.Wait() == nil {
					wins.Store(i, true)
				}
			})
		}
		wg.Wait()
		var won int
		wins.Range(func(any, any) bool { won++; return true })
		if won != 1 {
			t.Fatalf("%d providers won one shared domain", won)
		}
		for i, ctx := range ctxs {
			if _, ok := FS.Lookup(ctx); !ok {
				t.Fatalf("context %d does not see the shared provider", i)
			}
		}
	}
}

// A service's domain filter reaches the listeners that resolve its name to
// the emitter's domain: isolated, shared, labelled or inherited through a
// plugin; global listeners hear everything.
func TestDomainFilter(t *testing.T) {
	root, _ := newRoot(t)
	ev := runtime.NewEvent[int]("domain-filter")
	var heard recorder
	on := func(ctx *runtime.Context, name string, opts ...runtime.ListenOption) {
		t.Helper()
		if _, err := ev.On(ctx, func(int) error { heard.add(name); return nil }, opts...); err != nil {
			t.Fatal(err)
		}
	}
	a := root.Isolate(FS.Name())
	aChild := mustPlugin(t, a, runtime.Func("a child", func(*runtime.Context) error { return nil }), nil).Context()
	b := root.Isolate(FS.Name())
	l1, l2 := root.Isolate(FS.Name(), label("L")), root.Isolate(FS.Name(), label("L"))
	other := root.Isolate("other")
	extended := root.Extend(sessionKey{}, "x")
	on(root, "root")
	on(a, "a")
	on(aChild, "a child")
	on(b, "b")
	on(b, "b global", runtime.Global())
	on(l1, "l1")
	on(l2, "l2")
	on(other, "other name")
	on(extended, "extended")
	cases := []struct {
		from *runtime.Context
		name string
		want []string
	}{
		{root, "root", []string{"root", "b global", "other name", "extended"}},
		{a, "a", []string{"a", "a child", "b global"}},
		{aChild, "a plugin under a", []string{"a", "a child", "b global"}},
		{b, "b", []string{"b", "b global"}},
		{l2, "a labelled context", []string{"b global", "l1", "l2"}},
		{other, "a context isolating another name", []string{"root", "b global", "other name", "extended"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			heard.reset()
			if err := ev.EmitTo(c.from, FS.Domain(c.from), 1); err != nil {
				t.Fatal(err)
			}
			equal(t, "heard", heard.list(), c.want)
		})
	}
}
