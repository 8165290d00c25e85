package loader

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gordis-run/gordis/internal/yamlpatch"
)

// A save of the user's that lands while the loader edits the file is not
// overwritten: the loader sees that the file changed since it read it and
// edits the user's text instead.
func TestWriteBackKeepsAnEditMadeMeanwhile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "gordis.yaml")
	if err := os.WriteFile(file, []byte("- {id: a, name: live}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := &Loader{file: file}
	var seen []string
	err := l.writeBack("a", func(src []byte, at yamlpatch.Path) ([]byte, error) {
		seen = append(seen, string(src))
		if len(seen) == 1 { // the user saves now, as an editor does
			tmp := file + ".tmp"
			if err := os.WriteFile(tmp, []byte("# the user's\n- {id: a, name: live}\n"), 0o644); err != nil {
				return nil, err
			}
			if err := os.Rename(tmp, file); err != nil {
				return nil, err
			}
		}
		return yamlpatch.Set(src, append(at, "disabled"), true)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if want := "# the user's\n- {id: a, name: live, disabled: true}\n"; string(got) != want || len(seen) != 2 {
		t.Fatalf("after %d edits:\n%s\nwant:\n%s", len(seen), got, want)
	}
}
