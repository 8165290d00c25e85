package runtime_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/gordis-run/gordis/runtime"
)

type limits struct {
	Read   int            `json:"read,omitempty"`
	Write  int            `json:"write,omitempty"`
	Globs  []string       `json:"globs,omitempty"`
	Nested *limitsNested  `json:"nested,omitempty"`
	Extra  map[string]int `json:"extra,omitempty"`
}

type limitsNested struct {
	A int `json:"a,omitempty"`
	B int `json:"b,omitempty"`
}

var caps = runtime.NewService[string]("intercept/caps")

// Layers merge from the root down (the nearest wins), field by field;
// layers of other services, and contexts without layers, change nothing.
func TestResolveConfig(t *testing.T) {
	root, _ := newRoot(t)
	base := limits{Read: 2000, Write: 100, Globs: []string{"*"}, Nested: &limitsNested{A: 1, B: 1}, Extra: map[string]int{"x": 1}}
	under := func(ctx *runtime.Context) *runtime.Context {
		return mustPlugin(t, ctx, runtime.Func("under", func(*runtime.Context) error { return nil }), nil).Context()
	}
	cases := []struct {
		name string
		ctx  *runtime.Context
		want string
	}{
		{"no layer", root, `{"read":2000,"write":100,"globs":["*"],"nested":{"a":1,"b":1},"extra":{"x":1}}`},
		{"a map layer", root.Intercept(caps.Name(), map[string]any{"read": 10}),
			`{"read":10,"write":100,"globs":["*"],"nested":{"a":1,"b":1},"extra":{"x":1}}`},
		{"a struct layer: zero omitempty fields are absent", root.Intercept(caps.Name(), limits{Write: 5}),
			`{"read":2000,"write":5,"globs":["*"],"nested":{"a":1,"b":1},"extra":{"x":1}}`},
		{"raw JSON; objects merge, lists are replaced",
			root.Intercept(caps.Name(), json.RawMessage(`{"globs":["*.go"],"nested":{"b":2},"extra":{"y":2}}`)),
			`{"read":2000,"write":100,"globs":["*.go"],"nested":{"a":1,"b":2},"extra":{"x":1,"y":2}}`},
		{"the nearest layer wins", root.Intercept(caps.Name(), map[string]int{"read": 1, "write": 1}).Intercept(caps.Name(), map[string]int{"read": 2}),
			`{"read":2,"write":1,"globs":["*"],"nested":{"a":1,"b":1},"extra":{"x":1}}`},
		{"another service's layer", root.Intercept("other", map[string]int{"read": 1}),
			`{"read":2000,"write":100,"globs":["*"],"nested":{"a":1,"b":1},"extra":{"x":1}}`},
		{"a plugin under a layer, with other contexts between",
			under(root.Intercept(caps.Name(), map[string]int{"read": 3}).Isolate(FS.Name()).Extend(sessionKey{}, "s")),
			`{"read":3,"write":100,"globs":["*"],"nested":{"a":1,"b":1},"extra":{"x":1}}`},
		{"unknown fields are ignored", root.Intercept(caps.Name(), map[string]int{"unknown": 3}),
			`{"read":2000,"write":100,"globs":["*"],"nested":{"a":1,"b":1},"extra":{"x":1}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := runtime.ResolveConfig(c.ctx, caps.Name(), base)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(got)
			if string(raw) != c.want {
				t.Fatalf("got  %s\nwant %s", raw, c.want)
			}
		})
	}
	// The merge never writes into base.
	if fmt.Sprint(base.Nested, base.Extra) != "&{1 1} map[x:1]" {
		t.Fatalf("base changed: %v %v", base.Nested, base.Extra)
	}
}

// A layer that does not fit the config, or cannot be marshalled, is the
// resolve's error, and base comes back.
func TestResolveConfigErrors(t *testing.T) {
	root, _ := newRoot(t)
	cases := []struct {
		name  string
		layer any
		want  string
	}{
		{"a field of another type", map[string]any{"read": "many"},
			`runtime: intercepted config of service "intercept/caps": json: cannot unmarshal string into Go struct field limits.read of type int`},
		{"not JSON", make(chan int),
			`runtime: intercepted config of service "intercept/caps": json: unsupported type: chan int`},
		{"not an object", json.RawMessage(`[1]`),
			`runtime: intercepted config of service "intercept/caps": json: cannot unmarshal array into Go value of type runtime_test.limits`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := runtime.ResolveConfig(root.Intercept(caps.Name(), c.layer), caps.Name(), limits{Read: 7})
			if err == nil || err.Error() != c.want || got.Read != 7 {
				t.Fatalf("got %+v, %v\nwant base and %s", got, err, c.want)
			}
		})
	}
}

// Intercepted contexts are read from many goroutines: resolving and the
// logger's cached name race with nothing.
func TestInterceptConcurrently(t *testing.T) {
	root, logs := newRoot(t)
	ctx := root.Intercept(runtime.Log, runtime.LogConfig{Name: "shared"}).Intercept(caps.Name(), map[string]int{"read": 9})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				ctx.Logger().Info("x")
				if c, err := runtime.ResolveConfig(ctx, caps.Name(), limits{}); err != nil || c.Read != 9 {
					t.Errorf("%+v, %v", c, err)
				}
			}
		})
	}
	wg.Wait()
	for _, r := range logs.Records() {
		if r.Attrs["plugin"] != "shared" {
			t.Fatalf("logged as %q", r.Attrs["plugin"])
		}
	}
}
