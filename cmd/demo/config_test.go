package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
