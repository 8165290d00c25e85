package registry

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// sections sort by order, then name; disposal removes a plugin's
// sections.
func TestPrompt(t *testing.T) {
	root := newRoot(t)
	p := NewPrompt()
	if err := p.Add(root, Section{Name: "base", Order: 0, Text: "You are a coding agent."}); err != nil {
		t.Fatal(err)
	}
	f := plugin(t, root, "toolfs", func(ctx *runtime.Context) error {
		for _, s := range []Section{
			{Name: "tool:write", Order: 101, Text: "write text"},
			{Name: "tool:read", Order: 100, Text: "read text"},
			{Name: "tool:list", Order: 99, Text: "list text"},
			{Name: "tool:edit", Order: 102, Text: "edit text"},
		} {
			if err := p.Add(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err := p.Add(root, Section{Name: "z-same-order", Order: 100, Text: "after read"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Add(root, Section{Name: "empty", Order: 50}); err != nil {
		t.Fatal(err)
	}
	want := "You are a coding agent.\n\nlist text\n\nread text\n\nafter read\n\nwrite text\n\nedit text"
	if got := p.Assemble(); got != want {
		t.Fatalf("Assemble:\n%q\nwant\n%q", got, want)
	}
	var names []string
	for _, s := range p.Sections() {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "base,empty,tool:list,tool:read,z-same-order,tool:write,tool:edit" {
		t.Fatalf("Sections: %v", names)
	}

	if err := p.Add(root, Section{Name: "tool:read", Text: "again"}); err == nil || err.Error() != `registry: prompt section "tool:read" is already added` {
		t.Fatalf("duplicate: %v", err)
	}
	if err := p.Add(root, Section{Text: "anonymous"}); err == nil {
		t.Fatal("section without a name accepted")
	}

	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	if got := p.Assemble(); got != "You are a coding agent.\n\nafter read" {
		t.Fatalf("after dispose: %q", got)
	}
	if err := p.Add(f.Context(), Section{Name: "late", Text: "x"}); err == nil {
		t.Fatal("added on a disposed context")
	}
}

// The plugin provides both services and validates its config.
func TestPlugin(t *testing.T) {
	root := newRoot(t)
	f := runtimetest.Plug(t, root, Plugin, nil)
	reg, ok := Tools.Lookup(root)
	if !ok || reg == nil {
		t.Fatal("no tools service")
	}
	if reg.maxParallel.Load() != defaultMaxParallel {
		t.Fatalf("maxParallel %d", reg.maxParallel.Load())
	}
	if p, ok := Prompts.Lookup(root); !ok || p == nil {
		t.Fatal("no prompt service")
	}
	// Disposal withdraws the services.
	if err := f.Dispose(); err != nil {
		t.Fatal(err)
	}
	if _, ok := Tools.Lookup(root); ok {
		t.Fatal("tools service survives disposal")
	}

	f = runtimetest.Plug(t, root, Plugin, json.RawMessage(`{"maxParallel":3}`))
	reg, _ = Tools.Lookup(root)
	if reg.maxParallel.Load() != 3 {
		t.Fatalf("maxParallel %d", reg.maxParallel.Load())
	}
	// A new config is taken in place: the same registry, and a plugin that
	// injects it is not restarted.
	applies := 0
	runtimetest.Plug(t, root, runtime.Func("user", func(*runtime.Context) error { applies++; return nil }, runtime.Inject(Tools)), nil)
	if err := f.Update(Config{MaxParallel: 5}); err != nil {
		t.Fatal(err)
	}
	if now, _ := Tools.Lookup(root); now != reg || reg.maxParallel.Load() != 5 || applies != 1 {
		t.Fatalf("after Update: same registry %v, maxParallel %d, user applied %d times; want true, 5, 1", now == reg, reg.maxParallel.Load(), applies)
	}
	f.Dispose()

	for _, bad := range []string{`{"maxParallel":0}`, `{"maxParallel":1.5}`, `{"maxParalel":2}`} {
		f, err := root.Plugin(Plugin, json.RawMessage(bad))
		if err == nil {
			err = f.Wait()
		}
		if err == nil {
			t.Errorf("config %s accepted", bad)
		}
	}
}

// Hosts without the plugin get the default cap from New too.
func TestNewDefaults(t *testing.T) {
	_, r := newRegistry(t, Config{MaxParallel: -1})
	if r.maxParallel.Load() != defaultMaxParallel {
		t.Fatalf("maxParallel %d", r.maxParallel.Load())
	}
}

// FuzzExecute: any arguments give exactly one result, never a panic, and the
// same result twice.
func FuzzExecute(f *testing.F) {
	for _, seed := range []string{``, `{}`, `{"file_path":"a","offset":1.5}`, `{"offset":null}`, `[`, `"x"`, `{"file_path":"a","limit":"x","z":{}}`} {
		f.Add(seed)
	}
	root := runtime.New()
	defer root.Close()
	r := New(root, Config{})
	read, err := Define("read", "", func(_ context.Context, _ *Call, a readArgs) (readArgs, error) { return a, nil }, func(a readArgs) string { return a.FilePath })
	if err != nil {
		f.Fatal(err)
	}
	if err := r.Register(root, read); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, args string) {
		first := r.Execute(context.Background(), &Call{Tool: "read", Args: json.RawMessage(args)})
		second := r.Execute(context.Background(), &Call{Tool: "read", Args: json.RawMessage(args)})
		if first.Text != second.Text || first.IsError != second.IsError {
			t.Fatalf("not deterministic: %q vs %q", first.Text, second.Text)
		}
		if first.IsError && (first.Error == nil || !strings.HasPrefix(first.Text, "Error: ")) {
			t.Fatalf("malformed failure %+v", first)
		}
		if first.IsError && first.Error.Code != CodeInvalidArgs {
			t.Fatalf("unexpected failure %+v", first.Error)
		}
	})
}

// Contribute registers the tools and adds the sections through the
// services the plugin injects; disposing the plugin removes both.
func TestContribute(t *testing.T) {
	root := newRoot(t)
	runtimetest.Plug(t, root, Plugin, nil)
	var reg *Registry
	var prompts *Prompt
	runtimetest.Plug(t, root, runtime.Func("host", func(ctx *runtime.Context) (err error) {
		if reg, err = Tools.Get(ctx); err != nil {
			return err
		}
		prompts, err = Prompts.Get(ctx)
		return err
	}, runtime.Inject(Tools, Prompts)), nil)
	echo := Tool{Name: "echo", Execute: func(context.Context, *Call) (any, error) { return "hi", nil }}
	f := runtimetest.Plug(t, root, runtime.Func("echoes", func(ctx *runtime.Context) error {
		return Contribute(ctx, []Tool{echo}, []Section{{Name: "tool:echo", Order: 1, Text: "Use echo."}})
	}, runtime.Inject(Tools, Prompts)), nil)
	if defs := reg.Definitions(); len(defs) != 1 || defs[0].Name != "echo" || prompts.Assemble() != "Use echo." {
		t.Fatalf("contributed: %v, prompt %q", defs, prompts.Assemble())
	}
	f.Dispose()
	if defs := reg.Definitions(); len(defs) != 0 || prompts.Assemble() != "" {
		t.Errorf("after disposal: %v, prompt %q", defs, prompts.Assemble())
	}
}
