package yamlpatch_test

import (
	"fmt"

	"github.com/gordis-run/gordis/internal/yamlpatch"
)

// A plugin raised its read limit and a second one disposed itself; the
// loader writes both back, and every comment stays.
func Example() {
	src := []byte(`# the default deployment
- id: tools
  name: toolfs
  config:
    readLimit: 2000   # lines per read
    roots: [{path: vendor, readOnly: true}]
- name: auditlog      # no id yet
  config: {}
`)
	out, err := yamlpatch.Set(src, yamlpatch.Path{0, "config"}, map[string]any{
		"readLimit": 4000,
		"roots":     []any{map[string]any{"path": "vendor", "readOnly": true}},
	})
	if err == nil {
		out, err = yamlpatch.Set(out, yamlpatch.Path{1, "disabled"}, true)
	}
	if err == nil {
		out, err = yamlpatch.Insert(out, yamlpatch.Path{1, "id"}, "audit-7f3a")
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(out))
	// Output:
	// # the default deployment
	// - id: tools
	//   name: toolfs
	//   config:
	//     readLimit: 4000   # lines per read
	//     roots: [{path: vendor, readOnly: true}]
	// - id: audit-7f3a
	//   name: auditlog      # no id yet
	//   config: {}
	//   disabled: true
}

func ExampleDelete() {
	out, err := yamlpatch.Delete([]byte("a: 1 # one\nb: 2 # two\n"), yamlpatch.Path{"a"})
	fmt.Printf("%q %v\n", out, err)
	// Output: "b: 2 # two\n" <nil>
}
