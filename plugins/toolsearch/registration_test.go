package toolsearch_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/plugins/fslocal"
	"github.com/gordis-run/gordis/plugins/toolsearch"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

const (
	globDescription = "Find files whose paths match a glob pattern. Returns matching file paths — never directories — including hidden and ignored files (VCS metadata directories are excluded). Up to 100 paths come back in modification-time order; a larger result instead returns 100 paths sampled across top-level entries, says so, and reports where the complete sorted list was saved. This tool does not enumerate directory entries."
	grepDescription = "Search file contents with a ripgrep regular expression. Returns matching lines with line numbers, grouped by file. Returns the first 250 matches inline; a capped result reports where the complete match list was saved. Use read on a matched file for surrounding context."
	globGuidance    = "Use the glob tool — not shell find — to discover files by path pattern. A pattern with no \"/\" matches basenames at any depth, so \"*\" matches every file in the tree rather than its top level. Results are files only, never directories, and include hidden and ignored files: a result that fits comes back in modification-time order, while a larger one is sampled across top-level entries, so it spans the tree instead of one subtree."
	grepGuidance    = "Use the grep tool — not shell grep or rg — to search file contents. Use read on a matched file when you need surrounding context."
)

// S-001..S-005, S-007, decision 10: two tools with exact schemas, texts and
// prompt sections, parallel-safe and read-only; disposal removes them all.
func TestRegistration(t *testing.T) {
	e := setup(t, options{})
	defs := e.tools.Definitions()
	if len(defs) != 2 || defs[0].Name != "glob" || defs[1].Name != "grep" {
		t.Fatalf("tools %+v", defs)
	}
	if defs[0].Description != globDescription {
		t.Errorf("glob description %q", defs[0].Description)
	}
	if defs[1].Description != grepDescription {
		t.Errorf("grep description %q", defs[1].Description)
	}
	for _, d := range defs {
		if !d.Traits.ReadOnly || d.Traits.Destructive || fmt.Sprint(d.Traits.Paths) != "[path]" {
			t.Errorf("%s traits %+v", d.Name, d.Traits)
		}
	}
	type property struct {
		Type        string `json:"type"`
		Description string `json:"description"`
	}
	var schemas [2]struct {
		Properties           map[string]property `json:"properties"`
		Required             []string            `json:"required"`
		AdditionalProperties *bool               `json:"additionalProperties"`
	}
	for i, d := range defs {
		if err := json.Unmarshal(d.Parameters, &schemas[i]); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(schemas[i].Required) != "[pattern]" || schemas[i].AdditionalProperties != nil {
			t.Errorf("%s schema %s", d.Name, d.Parameters)
		}
	}
	for _, c := range []struct {
		tool int
		name string
		want string
	}{
		{0, "pattern", `Glob pattern to match file paths against (e.g. "**/*.ts", "src/**/*.test.js"). A pattern with no "/" matches the basename at any depth, so "*" and "*.ts" both search the whole tree; include a separator to anchor the depth.`},
		{0, "path", "Directory to search in. Defaults to the session workspace; a relative path resolves against it."},
		{1, "pattern", "Regular expression to search for (ripgrep syntax)."},
		{1, "path", "File or directory to search. Defaults to the session workspace; a relative path resolves against it."},
		{1, "include", `One glob filter for which files to search (e.g. "*.ts", "*.{js,jsx}"). Not a list; negation is not supported.`},
	} {
		p, ok := schemas[c.tool].Properties[c.name]
		if !ok || p.Type != "string" || p.Description != c.want {
			t.Errorf("%s.%s = %+v", defs[c.tool].Name, c.name, p)
		}
	}
	if n := len(schemas[0].Properties) + len(schemas[1].Properties); n != 5 {
		t.Errorf("%d parameters, want 5", n)
	}
	prompt := e.prompt.Assemble()
	i, j := strings.Index(prompt, globGuidance), strings.Index(prompt, grepGuidance)
	if i < 0 || j < i {
		t.Errorf("prompt %q", prompt)
	}
	if err := e.fiber.Dispose(); err != nil {
		t.Fatal(err)
	}
	if n := len(e.tools.Definitions()); n != 0 {
		t.Errorf("%d tools left after disposal", n)
	}
	if p := e.prompt.Assemble(); strings.Contains(p, "glob tool") || strings.Contains(p, "grep tool") {
		t.Errorf("prompt left after disposal: %q", p)
	}
}

// S-003, S-007, S-009: configured caps are interpolated into the
// descriptions.
func TestConfiguredDescriptions(t *testing.T) {
	e := setup(t, options{config: toolsearch.Config{GlobMaxResults: 7, GrepMaxMatches: 9}})
	defs := e.tools.Definitions()
	if want := strings.ReplaceAll(globDescription, "100", "7"); defs[0].Description != want {
		t.Errorf("glob description %q", defs[0].Description)
	}
	if want := strings.ReplaceAll(grepDescription, "250", "9"); defs[1].Description != want {
		t.Errorf("grep description %q", defs[1].Description)
	}
}

// S-008: every key must be an integer >= 1, or the plugin fails to load,
// with the message the runtime gives every plugin's config (as R-008 for
// toolfs), before anything is applied.
func TestConfigRejected(t *testing.T) {
	load := func(cfg any) error {
		root := runtime.New(runtime.WithLogger(slog.New(slog.DiscardHandler)))
		defer root.Close()
		for _, p := range []struct {
			p   runtime.Plugin
			cfg any
		}{{registry.Plugin, nil}, {fslocal.Plugin, fslocal.Config{Cwd: t.TempDir()}}, {toolsearch.Plugin, cfg}} {
			f, err := root.Plugin(p.p, p.cfg)
			if err == nil {
				err = f.Wait()
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	for _, key := range []string{"globMaxResults", "grepMaxMatches", "grepMaxLineBytes", "rawOutputMaxBytes", "timeoutMs"} {
		for _, v := range []any{0, -1, 1.5, -100, 0.5} {
			want := `invalid config for plugin "toolsearch": "` + key + `" must be a positive integer`
			if err := load(map[string]any{key: v}); err == nil || err.Error() != want {
				t.Errorf("%s=%v: %v, want %q", key, v, err, want)
			}
		}
	}
	for _, cfg := range []any{nil, map[string]any{"globMaxResults": 1, "timeoutMs": 2.0, "rawOutputMaxBytes": 1e12}} {
		if err := load(cfg); err != nil {
			t.Errorf("%v: %v", cfg, err)
		}
	}
}

// Keep the registry's names in view: a SearchError is a CodedError.
var _ registry.CodedError = (*toolsearch.SearchError)(nil)
