package loader_test

import (
	"path/filepath"
	"testing"

	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// An unknown key in a config suggests the keys its plugin allows there
// within a few edits, at any depth; an unknown entry key suggests the
// entry's keys.
func TestUnknownKeySuggestions(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"- {id: a, name: counter, config: {limt: 1}}\n",
			`:1:35: entry "a" (counter): unknown property "limt" (did you mean "limit"?)`},
		{"- {id: a, name: counter, config: {Greeting: x}}\n",
			`:1:35: entry "a" (counter): unknown property "Greeting" (did you mean "greeting"?)`},
		{"- {id: a, name: counter, config: {roots: [{path: x, readonly: true}]}}\n",
			`:1:53: entry "a" (counter): unknown property "roots[0].readonly" (did you mean "readOnly"?)`},
		{"- {id: a, name: counter, config: {colour: red}}\n",
			`:1:35: entry "a" (counter): unknown property "colour"`},
		{"- {id: a, name: counter, disable: true}\n",
			`:1:26: entry "a" (counter): unknown key "disable" (did you mean "disabled"?)`},
		{"- {id: a, name: counter, colour: red}\n",
			`:1:26: entry "a" (counter): unknown key "colour" (an entry has id, name, config, disabled, inject, isolate, intercept)`},
	} {
		file := write(t, filepath.Join(t.TempDir(), "gordis.yaml"), tc.text)
		_, err := loader.Open(runtimetest.New(t), file, plugins(t, &recorder{}))
		if err == nil || err.Error() != file+tc.want {
			t.Errorf("%q:\ngot  %v\nwant %s", tc.text, err, file+tc.want)
		}
	}
}
