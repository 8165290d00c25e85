package loader

import (
	"errors"
	"testing"

	"github.com/gordis-run/gordis/runtime"
)

type fuzzConfig struct {
	Limit int      `json:"limit,omitempty" jsonschema:"minimum=1"`
	Tags  []string `json:"tags,omitempty"`
}

// FuzzParse: any text parses or fails with errors; never a panic. Every
// error about an entry has a position (a YAML error may have none: an
// unknown anchor), and an accepted tree has unique ids.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		"- {id: a, name: p, config: {limit: 2}}",
		"- name: group\n  config:\n    - {name: p, config: {tags: [x, '${HOME}']}}\n",
		"- {name: p, isolate: {fs: true, x: lbl}, intercept: {logger: {name: n}}, inject: [fs]}",
		"- &a {name: p}\n- *a\n",
		"- {name: p, config: {limit: 0, tags: 3, other: .inf}}",
		"a: b",
		"- [1, 2]",
		"- {name: p, config: {<<: {limit: 1}}}",
		"- {id: x, name: p}\n- {id: x, name: q}\n",
		"- &g {name: group, config: [*g]}",
		"- {name: p, config: &c {tags: [*c]}}",
	} {
		f.Add(seed)
	}
	cat, err := NewCatalog(runtime.Configured("p", func(*runtime.Context, fuzzConfig) error { return nil }))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		tr, err := (&parser{file: "f.yaml", cat: cat}).parse([]byte(text))
		if err != nil {
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("not an Errors: %v", err)
			}
			for _, e := range errs {
				if e.Err == nil || e.ID != "" && e.Line <= 0 {
					t.Fatalf("no position: %v", e)
				}
			}
			return
		}
		seen := map[string]bool{}
		tr.all(func(s *spec) {
			if s.id == "" || seen[s.id] {
				t.Fatalf("id %q missing or repeated", s.id)
			}
			seen[s.id] = true
		})
	})
}
