package loader_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/gordis-run/gordis/internal/schema"
	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// The file's schema accepts what the loader accepts and rejects, with the
// plugin's own schema, what the loader rejects.
func TestSchema(t *testing.T) {
	s := compile(t, plugins(t, &recorder{}))
	for _, tc := range []struct{ file, want string }{
		{`
- {id: a, name: counter, config: {greeting: a, limit: 2, roots: [{path: x}]}}
- {name: plain, disabled: true}
- id: g
  name: group
  isolate: {store: true, fs: shared}
  intercept: {logger: {name: x}}
  inject: [store]
  config:
    - {name: live, config: {limit: 1}}
    - {name: group, config: [{name: store}]}
`, "<nil>"},
		{"", "<nil>"},
		{"- {name: counter, config: {limit: 0}}", `"[0].config.limit" must be >= 1`},
		{"- {name: group, config: [{name: counter, config: {extra: 1}}]}", `unknown property "[0].config[0].config.extra"`},
		{"- {name: nope}", `"[0].name" must be one of "counter", "live", "plain", "reader", "store", "group"`},
		{"- {name: plain, colour: red}", `unknown property "[0].colour"`},
		{"- {name: plain, isolate: {fs: 1}}", `"[0].isolate.fs" must be a boolean or a string`},
		{"- {name: plain, isolate: {fs: ''}}", `"[0].isolate.fs" must not be empty`},
	} {
		var v any
		if err := yaml.Unmarshal([]byte(tc.file), &v); err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(s.Validate(raw)); got != tc.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tc.file, got, tc.want)
		}
	}
}

// A plugin name with a slash is escaped in the schema's references.
func TestSchemaSlashName(t *testing.T) {
	cat, err := loader.NewCatalog(runtime.Configured("acme/tool", func(*runtime.Context, Config) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	s := compile(t, cat)
	if got := fmt.Sprint(s.Validate([]byte(`[{"name": "acme/tool", "config": {"limit": 0}}]`))); got != `"[0].config.limit" must be >= 1` {
		t.Fatalf("got %s", got)
	}
}

// An entry of a plugin whose config has a required property must give a
// config, in the schema as for the loader.
func TestSchemaRequiredConfig(t *testing.T) {
	type needs struct {
		Path string `json:"path" jsonschema:"required"`
	}
	cat, err := loader.NewCatalog(runtime.Configured("needs", func(*runtime.Context, needs) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	s := compile(t, cat)
	for _, tc := range []struct{ file, want string }{
		{`[{"name": "needs", "config": {"path": "x"}}]`, "<nil>"},
		{`[{"name": "needs"}]`, `missing required property "[0].config"`},
		{`[{"name": "needs", "config": {}}]`, `missing required property "[0].config.path"`},
	} {
		if got := fmt.Sprint(s.Validate([]byte(tc.file))); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.file, got, tc.want)
		}
	}
	if _, err := loader.Open(runtimetest.New(t), write(t, filepath.Join(t.TempDir(), "gordis.yaml"), "- {id: n, name: needs}\n"), cat); err == nil {
		t.Fatal("the loader took an entry without its required config")
	}
}

// compile returns the file schema of cat, compiled.
func compile(t *testing.T, cat *loader.Catalog) *schema.Schema {
	t.Helper()
	doc, err := loader.Schema(cat)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Compile(doc)
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return s
}
