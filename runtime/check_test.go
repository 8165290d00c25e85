package runtime_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gordis-run/gordis/runtime"
)

type checked struct {
	Limit int `json:"limit,omitempty" jsonschema:"minimum=1,default=5"`
}

// CheckConfig reports what Plugin would, and applies nothing.
func TestCheckConfig(t *testing.T) {
	applied := 0
	p := runtime.Configured("checked", func(*runtime.Context, checked) error { applied++; return nil })
	for _, tc := range []struct {
		config any
		want   string
	}{
		{nil, "<nil>"},
		{map[string]any{"limit": 2}, "<nil>"},
		{map[string]any{"limit": 0}, `invalid config for plugin "checked": "limit" must be a positive integer`},
		{[]byte(`{"other": 1}`), `invalid config for plugin "checked": unknown property "other"`},
	} {
		if got := fmt.Sprint(runtime.CheckConfig(p, tc.config)); got != tc.want {
			t.Errorf("CheckConfig(%v) = %s, want %s", tc.config, got, tc.want)
		}
	}
	if err := runtime.CheckConfig(nil, nil); !errors.Is(err, runtime.ErrInvalidPlugin) {
		t.Errorf("CheckConfig(nil) = %v", err)
	}
	if applied != 0 {
		t.Fatalf("applied %d times", applied)
	}
}

func TestConfigSchema(t *testing.T) {
	p := runtime.Configured("checked", func(*runtime.Context, checked) error { return nil })
	got, err := runtime.ConfigSchema(p)
	want := `{"properties":{"limit":{"type":"integer","minimum":1,"default":5}},"additionalProperties":false,"type":"object"}`
	if err != nil || string(got) != want {
		t.Fatalf("ConfigSchema = %s, %v\nwant %s", got, err, want)
	}
	if got, err := runtime.ConfigSchema(runtime.Func("plain", func(*runtime.Context) error { return nil })); got != nil || err != nil {
		t.Fatalf("a plugin without config: %s, %v", got, err)
	}
}

// UpdateEvent reports every Update, in place or by restart, with the
// configs before and after, and nothing for an invalid config.
func TestUpdateEvent(t *testing.T) {
	root, _ := newRoot(t)
	var got []string
	if _, err := runtime.UpdateEvent.On(root, func(c runtime.ConfigChange) error {
		got = append(got, fmt.Sprintf("%s %v -> %v", c.Fiber.Name(), c.From, c.To))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	restarts := mustPlugin(t, root, runtime.Configured("restarts", func(*runtime.Context, checked) error { return nil }), nil)
	inPlace := mustPlugin(t, root, runtime.Configured("inplace", func(ctx *runtime.Context, _ checked) error {
		return ctx.OnUpdate(func(any) error { return nil })
	}), nil)
	for _, step := range []struct {
		f      *runtime.Fiber
		config any
	}{
		{restarts, map[string]any{"limit": 2}},
		{inPlace, map[string]any{"limit": 3}},
		{inPlace, map[string]any{"limit": -1}},
	} {
		_ = step.f.Update(step.config)
	}
	want := []string{"restarts {5} -> {2}", "inplace {5} -> {3}"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
