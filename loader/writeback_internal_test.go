package loader

import (
	"fmt"
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

// A file that changes under every attempt is left to its writer, and the
// write-back reported.
func TestWriteBackGivesUpOnAFileThatKeepsChanging(t *testing.T) {
	file := filepath.Join(t.TempDir(), "gordis.yaml")
	if err := os.WriteFile(file, []byte("- {id: a, name: live}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := &Loader{file: file}
	saves := 0
	err := l.writeBack("a", func(src []byte, at yamlpatch.Path) ([]byte, error) {
		saves++
		text := fmt.Sprintf("# save %d\n- {id: a, name: live}\n", saves)
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			return nil, err
		}
		return yamlpatch.Set(src, append(at, "disabled"), true)
	})
	want := `loader: ` + file + ` changed under each of 5 attempts to write entry "a" back`
	if err == nil || err.Error() != want || saves != 5 {
		t.Fatalf("after %d attempts: %v\nwant %s", saves, err, want)
	}
	if got, _ := os.ReadFile(file); string(got) != "# save 5\n- {id: a, name: live}\n" {
		t.Fatalf("file:\n%s", got)
	}
}
