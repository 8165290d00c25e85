package loader_test

import (
	"strings"
	"testing"
)

// A write-back that cannot be made is logged, naming the entry and why:
// the runtime does not hear a listener's error, and the next reload
// gives the plugin the file's config again.
func TestWriteBackFailureLogged(t *testing.T) {
	for _, tc := range []struct {
		name, text, edit, want string
	}{
		{"through an alias", "- {id: a, name: live, config: &c {greeting: a}}\n- {id: b, name: live, config: *c}\n", "",
			`loader: writing entry "b" back to FILE: yamlpatch: [1].config.limit (line 2, col 31): cannot patch as text: the path goes through the alias *c`},
		{"removed from the file", "- {id: b, name: live}\n", "[]\n",
			`loader: entry "b" is no longer in FILE: not written back`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _, logs, file := openLogged(t, plugins, tc.text)
			if tc.edit != "" {
				write(t, file, tc.edit)
			}
			if err := l.Fiber("b").Update(Config{Greeting: "a", Limit: 4}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range logs.Records() {
				if r.Message == "config not written back to the file" {
					got = append(got, r.Attrs["error"])
				}
			}
			if want := strings.ReplaceAll(tc.want, "FILE", file); len(got) != 1 || got[0] != want {
				t.Fatalf("logged %q, want %q", got, want)
			}
		})
	}
}
