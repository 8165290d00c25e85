package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	validator "github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v4"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

func TestConfigSchema(t *testing.T) {
	code, out, errOut := runDemoT(t, "config", "schema")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var schema struct {
		Schema string `json:"$schema"`
	}
	if err := json.Unmarshal([]byte(out), &schema); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if schema.Schema != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %q", schema.Schema)
	}
	for _, name := range []string{"registry", "fslocal", "fspolicy", "toolfs", "toolsearch", "auditlog", "protect", "wordcount", "readLimit"} {
		if !strings.Contains(out, `"`+name+`"`) {
			t.Errorf("the schema does not mention %q", name)
		}
	}
	for _, args := range [][]string{{"config"}, {"config", "check"}, {"config", "schema", "x"}} {
		if code, out, errOut := runDemoT(t, args...); code != 2 || out != "" || !strings.HasPrefix(errOut, "demo config: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want a usage error", args, code, out, errOut)
		}
	}
}

// --config builds the deployment from the file; a bad file fails with its
// position, before anything runs.
func TestConfigFlag(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "gordis.yaml")
	write := func(text string) {
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("- {id: registry, name: registry}\n- {id: fs, name: fslocal}\n- {id: tools, name: toolfs, config: {listMaxEntries: 7}}\n")
	code, out, errOut := runDemoT(t, "tools", "--config", conf)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "up to 7 are returned") || strings.Contains(out, `"grep"`) {
		t.Errorf("demo tools --config: want list, read, write, edit with a page of 7, and no search tools:\n%s", out)
	}

	write("- {id: tools, name: toolfs, config: {listMaxEntries: 0}}\n")
	code, out, errOut = runDemoT(t, "prompt", "--config", conf)
	want := conf + `:1:54: entry "tools" (toolfs): "listMaxEntries" must be a positive integer`
	if code != 1 || out != "" || !strings.Contains(errOut, want) {
		t.Errorf("demo prompt --config with a bad file: exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, want)
	}
}

// The schema, compiled by a standard JSON Schema validator as an editor's
// YAML language server would, accepts the repository's gordis.yaml and
// points at the value at fault in a broken copy.
func TestConfigSchemaChecksGordisYAML(t *testing.T) {
	code, out, errOut := runDemoT(t, "config", "schema")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	doc, err := validator.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	c := validator.NewCompiler()
	if err := c.AddResource("gordis.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("gordis.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	base, err := os.ReadFile("../../gordis.yaml")
	if err != nil {
		t.Fatal(err)
	}
	printer := message.NewPrinter(language.English)
	for _, tc := range []struct{ old, new, want string }{
		{"", "", ""},
		{"readLimit: 2000 ", "readLimit: 0 ", "/3/config/readLimit: minimum: got 0, want 1"},
		{"name: toolfs", "name: toolsf", "/3/name: value must be one of 'auditlog', 'fslocal', 'fspolicy', 'protect', 'registry', 'toolfs', 'toolsearch', 'wordcount', 'group'"},
		{"readLimit: 2000 ", "readLimt: 2000 ", "/3/config: additional properties 'readLimt' not allowed"},
		{"name: fspolicy", "name: fspolicy\n  disable: true", "/2: additional properties 'disable' not allowed"},
		{"unconfined: false", `unconfined: "no"`, "/1/config/unconfined: got string, want boolean"},
	} {
		text := strings.Replace(string(base), tc.old, tc.new, 1)
		if tc.old != "" && text == string(base) {
			t.Fatalf("gordis.yaml has no %q", tc.old)
		}
		var v any
		if err := yaml.Unmarshal([]byte(text), &v); err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := validator.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		// The leaves of the error tree: the values at fault.
		var got []string
		var leaves func(e *validator.ValidationError)
		leaves = func(e *validator.ValidationError) {
			if len(e.Causes) == 0 {
				got = append(got, "/"+strings.Join(e.InstanceLocation, "/")+": "+e.ErrorKind.LocalizedString(printer))
			}
			for _, c := range e.Causes {
				leaves(c)
			}
		}
		if err := schema.Validate(inst); err != nil {
			leaves(err.(*validator.ValidationError))
		}
		var want []string // none for the file as it is
		if tc.want != "" {
			want = []string{tc.want}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q for %q: got %q, want %q", tc.new, tc.old, got, want)
		}
	}
}
