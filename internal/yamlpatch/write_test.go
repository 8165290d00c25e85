package yamlpatch

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "gordis.yaml")

	if err := WriteFile(name, []byte("a: 1\n")); err != nil {
		t.Fatal(err)
	}
	checkFile(t, name, "a: 1\n", 0o644)

	if err := os.Chmod(name, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(name, []byte("a: 2\n")); err != nil {
		t.Fatal(err)
	}
	checkFile(t, name, "a: 2\n", 0o600)

	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink("gordis.yaml", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("a: 3\n")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	checkFile(t, name, "a: 3\n", 0o600)

	if err := WriteFile(filepath.Join(dir, "missing", "x.yaml"), []byte("a")); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("the directory holds %v, want gordis.yaml and link.yaml only (no temporary file left)", entries)
	}
}

func checkFile(t *testing.T, name, want string, mode os.FileMode) {
	t.Helper()
	got, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("content %q, want %q", got, want)
	}
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != mode {
		t.Errorf("mode %v, want %v", fi.Mode().Perm(), mode)
	}
}

// TestWriteFileAtomic reads the file while it is rewritten: every read
// sees one whole version, never a mix or an empty file.
func TestWriteFileAtomic(t *testing.T) {
	name := filepath.Join(t.TempDir(), "gordis.yaml")
	a, b := bytes.Repeat([]byte("a: 1\n"), 20000), bytes.Repeat([]byte("b: 2\n"), 30000)
	if err := WriteFile(name, a); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			data := a
			if i%2 == 0 {
				data = b
			}
			if err := WriteFile(name, data); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 200 {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
			t.Fatalf("read %d bytes that are neither version", len(got))
		}
	}
	close(stop)
	wg.Wait()
}
