package toolfs

import (
	"testing"
)

// four tools in order; list and read run in parallel, write and
// edit are exclusive.
func TestDefinitionsScheduling(t *testing.T) {
	defs, err := newToolset(nil, Config{ListMaxEntries: 200, ReadLimit: 2000, ReadMaxLineLength: 2000, ReadMaxBytes: 51200, ReadStreamMinSize: 10 << 20}).definitions()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name     string
		parallel bool
	}{{"list", true}, {"read", true}, {"write", false}, {"edit", false}}
	if len(defs) != len(want) {
		t.Fatalf("%d tools", len(defs))
	}
	for i, w := range want {
		d := defs[i]
		parallel := d.ConcurrencySafe != nil && d.ConcurrencySafe(nil)
		if d.Name != w.name || parallel != w.parallel {
			t.Errorf("tool %d: %s parallel=%v, want %s parallel=%v", i, d.Name, parallel, w.name, w.parallel)
		}
	}
}
