package loader

import (
	"fmt"
	"testing"

	"go.yaml.in/yaml/v4"
)

func TestLocate(t *testing.T) {
	var doc yaml.Node
	src := `limit: 0
roots:
  - {path: a}
  - readOnly: x
a.b:
  c: 1
a:
  b: 2
`
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	for _, tc := range []struct{ violation, want string }{
		{`"limit" must be a positive integer`, "1:8"},
		{`missing required property "roots[1].path"`, "4:5"},
		{`"roots[1].readOnly" must be a boolean`, "4:15"},
		{`unknown property "roots[1].readOnly"`, "4:5"},
		{`unknown property "a.b"`, "5:1"},
		{`"a.b.c" must be a string`, "6:6"},
		{`"a.b" must be a string`, "6:3"},
		{`"roots[7]" must be an object`, "3:3"},
		{`expected an object, got an array`, "1:1"},
		{`value must be one of 1, 2`, "1:1"},
		{`unknown property "zzz"`, "1:1"},
	} {
		n := locate(root, tc.violation)
		if got := fmt.Sprintf("%d:%d", n.Line, n.Column); got != tc.want {
			t.Errorf("%s: at %s, want %s", tc.violation, got, tc.want)
		}
	}
}
