package runtime

import (
	"errors"
	"testing"
)

func TestSmoke(t *testing.T) {
	root := New()
	defer root.Close()
	fs := NewService[string]("fs")
	ev := NewEvent[int]("smoke/ev")
	var got []int
	dep, err := root.Plugin(Func("dep", func(ctx *Context) error {
		v, err := fs.Get(ctx)
		if err != nil {
			return err
		}
		if v != "disk" {
			t.Errorf("got %q", v)
		}
		_, err = ev.On(ctx, func(n int) error { got = append(got, n); return nil })
		return err
	}, Inject("fs")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if dep.State() != Pending {
		t.Fatalf("state %v", dep.State())
	}
	prov, _ := root.Plugin(Func("prov", func(ctx *Context) error { return fs.Provide(ctx, "disk") }), nil)
	if err := prov.Wait(); err != nil {
		t.Fatal(err)
	}
	if dep.State() != Active {
		t.Fatalf("dep state %v err %v", dep.State(), dep.Err())
	}
	if err := ev.Emit(root, 1); err != nil {
		t.Fatal(err)
	}
	if err := prov.Dispose(); err != nil {
		t.Fatal(err)
	}
	if dep.State() != Pending {
		t.Fatalf("dep state %v", dep.State())
	}
	_ = ev.Emit(root, 2)
	if len(got) != 1 {
		t.Fatalf("got %v", got)
	}
	w := NewWaterfall[int, int]("smoke/w")
	_, _ = w.On(root, func(a int, next Next[int]) (int, error) { v, err := next(); return v + a, err })
	v, err := w.Run(root, 1, func() (int, error) { return 10, nil })
	if v != 11 || err != nil {
		t.Fatal(v, err)
	}
	bad, _ := root.Plugin(Func("bad", func(ctx *Context) error { panic("boom") }), nil)
	var pe *PanicError
	if !errors.As(bad.Wait(), &pe) || bad.State() != Failed {
		t.Fatal(bad.Wait(), bad.State())
	}
}
