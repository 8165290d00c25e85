package fstest

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
)

// TestWalk checks fs.Walk over the provider twice: with its fs.Walker,
// when it has one, and with the seam's generic walk, the Walker hidden
// behind a type that has only fs.FileSystem's methods, as
// testing/fstest's fsOnly hides capabilities. Both must visit the same
// entries in the same order, skip alike, report the same sizes and times,
// and open the same contents (the fixtures are plain UTF-8, so the
// Walker's bytes and the generic walk's text agree). It needs symlinks.
func TestWalk(t *testing.T, newFS NewFS) {
	fsys, root, _ := setup(t, newFS)
	files := map[string]string{
		"A.txt":     "upper\n",
		"_x.txt":    "underscore\n",
		"a/B/y.txt": "deep\n",
		"a/a.txt":   "nested a\n",
		"a/z.txt":   "nested z\n",
		"a.txt":     "top a\n",
		"b.txt":     "top b\n",
		"e/empty":   "",
	}
	for name, text := range files {
		put(t, filepath.Join(root, filepath.FromSlash(name)), text)
	}
	symlink(t, "a.txt", filepath.Join(root, "l-file"))
	symlink(t, "a", filepath.Join(root, "l-dir"))
	symlink(t, "nowhere", filepath.Join(root, "l-nowhere"))
	symlink(t, filepath.Dir(root), filepath.Join(root, "l-out")) // out of a confined provider's tree
	walkers := map[string]fs.FileSystem{"GenericWalk": coreOnly{fsys}}
	if _, ok := fsys.(fs.Walker); ok {
		walkers["Walker"] = fsys
	} else {
		t.Log("the provider has no fs.Walker: only the generic walk is checked")
	}
	want := []string{
		":directory",
		"A.txt:file",
		"_x.txt:file",
		"a:directory",
		"a/B:directory",
		"a/B/y.txt:file",
		"a/a.txt:file",
		"a/z.txt:file",
		"a.txt:file",
		"b.txt:file",
		"e:directory",
		"e/empty:file",
		"l-dir:symlink",
		"l-file:symlink",
		"l-nowhere:symlink",
		"l-out:symlink",
	}
	infos := map[string]map[string]fs.EntryInfo{}
	for name, w := range walkers {
		t.Run(name, func(t *testing.T) {
			infos[name] = walkEntries(t, w, root, want, files)
			walkSkips(t, w, root, want)
		})
	}
	if len(infos) == 2 {
		for _, line := range want[1:] {
			path, typ, _ := strings.Cut(line, ":")
			w, g := infos["Walker"][path], infos["GenericWalk"][path]
			if typ == string(fs.TypeSymlink) {
				g.ModTime = w.ModTime // a link's own time is not in the core methods
			}
			if w.Size != g.Size || !w.ModTime.Equal(g.ModTime) {
				t.Errorf("Info(%s): Walker %v, generic walk %v", path, w, g)
			}
		}
	}
}

// coreOnly hides every capability of a provider but fs.FileSystem.
type coreOnly struct{ fs.FileSystem }

// walkEntries walks root with fsys, checks the visits against want
// ("path:type"), opens every entry (files must read as in files, anything
// else is not a regular file), and returns the entries' infos.
func walkEntries(t *testing.T, fsys fs.FileSystem, root string, want []string, files map[string]string) map[string]fs.EntryInfo {
	ctx := context.Background()
	var got []string
	var entries []fs.WalkEntry
	infos := map[string]fs.EntryInfo{}
	err := fs.Walk(ctx, fsys, resolve(t, fsys, root), func(e fs.WalkEntry) error {
		got = append(got, e.Path()+":"+string(e.Type()))
		info, err := e.Info()
		if err != nil {
			t.Errorf("Info(%s): %v", e.Path(), err)
		}
		infos[e.Path()] = info
		entries = append(entries, e)
		return nil
	})
	if err != nil || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Walk = %v, visits:\n%s\nwant:\n%s", err, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, e := range entries { // after the walk, as a search reads
		path := filepath.Join(root, filepath.FromSlash(e.Path()))
		rc, err := e.Open(ctx)
		if e.Type() != fs.TypeFile {
			wantErr(t, err, fs.CodeNotRegularFile, `cannot read "`+path+`": not a regular file`)
			continue
		}
		if err != nil {
			t.Errorf("Open(%s): %v", e.Path(), err)
			continue
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(data) != files[e.Path()] {
			t.Errorf("Open(%s) read %q, %v; want %q", e.Path(), data, err, files[e.Path()])
		}
		if info := infos[e.Path()]; info.Size != int64(len(files[e.Path()])) {
			t.Errorf("Info(%s).Size = %d, want %d", e.Path(), info.Size, len(files[e.Path()]))
		}
	}
	return infos
}

// walkSkips checks SkipDir, SkipAll, a file target and a missing one.
func walkSkips(t *testing.T, fsys fs.FileSystem, root string, all []string) {
	ctx := context.Background()
	visits := func(target string, stop map[string]error) (string, error) {
		var got []string
		err := fs.Walk(ctx, fsys, resolve(t, fsys, target), func(e fs.WalkEntry) error {
			got = append(got, e.Path()+":"+string(e.Type()))
			return stop[e.Path()]
		})
		return strings.Join(got, "\n"), err
	}
	var want []string
	for _, line := range all {
		if !strings.HasPrefix(line, "a/") {
			want = append(want, line)
		}
	}
	if got, err := visits(root, map[string]error{"a": fs.SkipDir, "a.txt": fs.SkipDir}); err != nil || got != strings.Join(want, "\n") {
		t.Errorf("SkipDir: Walk = %v, visits:\n%s\nwant:\n%s", err, got, strings.Join(want, "\n"))
	}
	if got, err := visits(root, map[string]error{"a/B/y.txt": fs.SkipAll}); err != nil || got != strings.Join(all[:6], "\n") {
		t.Errorf("SkipAll: Walk = %v, visits:\n%s\nwant:\n%s", err, got, strings.Join(all[:6], "\n"))
	}
	if got, err := visits(root, map[string]error{"": fs.SkipDir}); err != nil || got != ":directory" {
		t.Errorf("SkipDir on the target: Walk = %v, visits %q", err, got)
	}
	if got, err := visits(filepath.Join(root, "l-dir"), nil); err != nil || got != ":directory\nB:directory\nB/y.txt:file\na.txt:file\nz.txt:file" {
		t.Errorf("Walk of a symlink to a directory = %v, visits:\n%s", err, got)
	}
	if got, err := visits(filepath.Join(root, "a/a.txt"), nil); err != nil || got != ":file" {
		t.Errorf("Walk of a file = %v, visits %q; want the file alone", err, got)
	}
	missing := filepath.Join(root, "nope")
	_, err := visits(missing, nil)
	wantErr(t, err, fs.CodeNotFound, `cannot list "`+missing+`": not found`)
}
