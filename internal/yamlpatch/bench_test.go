package yamlpatch

import (
	"fmt"
	"strings"
	"testing"
)

// fiftyEntries is a loader file of 50 commented entries, 300 lines.
func fiftyEntries() []byte {
	var b strings.Builder
	b.WriteString("# a deployment of fifty plugins\n")
	for i := range 50 {
		fmt.Fprintf(&b, "- id: e%d   # entry %d\n  name: toolfs\n  config:\n    readLimit: 2000\n    roots: [{path: vendor, readOnly: true}]\n\n", i, i)
	}
	return []byte(b.String())
}

func BenchmarkSet(b *testing.B) {
	src := fiftyEntries()
	for _, c := range []struct {
		name  string
		path  Path
		value any
	}{
		{"scalar", Path{25, "config", "readLimit"}, 3000},
		{"config", Path{25, "config"}, map[string]any{"readLimit": 3000, "roots": []any{map[string]any{"path": "vendor"}}}},
		{"add-key", Path{25, "disabled"}, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := Set(src, c.path, c.value); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
