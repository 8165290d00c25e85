package fslocal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
)

// jail is a confined provider on a fresh workspace "ws" beside a directory
// "out" it must never reach, holding out/secret.txt.
type jail struct {
	f           *FS
	ws, out     string
	secret      string
	docs, spare string // a read-only and a read-write extra root
}

func newJail(t *testing.T) *jail {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	j := &jail{ws: filepath.Join(base, "ws"), out: filepath.Join(base, "out"),
		docs: filepath.Join(base, "docs"), spare: filepath.Join(base, "spare")}
	for _, dir := range []string{j.ws, j.out, j.docs, j.spare} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	j.secret = filepath.Join(j.out, "secret.txt")
	write(t, j.secret, "secret", 0o644)
	write(t, filepath.Join(j.ws, "a.txt"), "alpha", 0o644)
	write(t, filepath.Join(j.docs, "guide.md"), "read me", 0o644)
	j.f = confined(t, Config{Cwd: j.ws, Roots: []Root{{Path: "../docs", ReadOnly: true}, {Path: j.spare}}})
	return j
}

// untouched fails the test when anything under out changed.
func (j *jail) untouched(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(j.out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "secret.txt" {
		var names []string
		for _, e := range entries[:min(len(entries), 5)] {
			names = append(names, e.Name())
		}
		t.Fatalf("outside directory now holds %d entries: %q...", len(entries), names)
	}
	if got, err := os.ReadFile(j.secret); err != nil || string(got) != "secret" {
		t.Fatalf("outside file = %q, %v", got, err)
	}
}

// op runs one provider operation on path the way the tools do: resolve,
// then the operation.
func (j *jail) op(ctx context.Context, verb, path string) (string, error) {
	t, err := j.f.Resolve(ctx, path, "")
	if err != nil {
		return "", err
	}
	switch verb {
	case "read":
		return j.f.ReadText(ctx, t)
	case "write":
		_, err = j.f.WriteText(ctx, t, "written", nil)
	case "edit":
		_, err = j.f.EditText(ctx, t, fs.EditRequest{Old: "e", New: "E", ReplaceAll: true}, nil)
	case "list":
		var entries []fs.DirEntry
		entries, err = j.f.ListDir(ctx, t)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name+":"+string(e.Type))
		}
		return strings.Join(names, ","), err
	case "stat":
		var info *fs.Info
		if info, err = j.f.Stat(ctx, t); info != nil {
			return string(info.Type), err
		}
	}
	return "", err
}

func TestConfinedRefusals(t *testing.T) {
	j := newJail(t)
	ctx := context.Background()
	mustLink(t, j.out, filepath.Join(j.ws, "outlink"))                       // a directory outside
	mustLink(t, j.secret, filepath.Join(j.ws, "secretlink"))                 // a file outside
	mustLink(t, "../out/secret.txt", filepath.Join(j.ws, "relsecret"))       // the same, relatively
	mustLink(t, "../../"+filepath.Base(j.out), filepath.Join(j.ws, "climb")) // ".." above the root
	outsideWS := func(verb, path string) string {
		return `cannot ` + verb + ` "` + path + `": outside the workspace "` + j.ws + `"`
	}
	for _, tc := range []struct {
		verb, path string
		msg        string
	}{
		{"write", "../out/new.txt", outsideWS("resolve", filepath.Join(j.out, "new.txt"))},
		{"read", j.secret, outsideWS("resolve", j.secret)},
		{"read", "/etc/hostname", outsideWS("resolve", "/etc/hostname")},
		{"list", "/", outsideWS("resolve", "/")},
		{"read", "outlink/secret.txt", outsideWS("resolve", filepath.Join(j.ws, "outlink/secret.txt"))},
		{"write", "outlink/new.txt", outsideWS("resolve", filepath.Join(j.ws, "outlink/new.txt"))},
		{"edit", "outlink/secret.txt", outsideWS("resolve", filepath.Join(j.ws, "outlink/secret.txt"))},
		{"list", "outlink", outsideWS("resolve", filepath.Join(j.ws, "outlink"))},
		{"read", "secretlink", outsideWS("resolve", filepath.Join(j.ws, "secretlink"))},
		{"write", "secretlink", outsideWS("resolve", filepath.Join(j.ws, "secretlink"))},
		{"edit", "relsecret", outsideWS("resolve", filepath.Join(j.ws, "relsecret"))},
		{"stat", "climb/secret.txt", outsideWS("resolve", filepath.Join(j.ws, "climb/secret.txt"))},
		{"write", "../docs/new.md", `cannot write "` + filepath.Join(j.docs, "new.md") + `": the root "` + j.docs + `" is read-only`},
		{"edit", "../docs/guide.md", `cannot edit "` + filepath.Join(j.docs, "guide.md") + `": the root "` + j.docs + `" is read-only`},
	} {
		t.Run(tc.verb+" "+tc.path, func(t *testing.T) {
			_, err := j.op(ctx, tc.verb, tc.path)
			var fe *fs.Error
			if !errors.As(err, &fe) || fe.Code != fs.CodeSandboxDenied || fe.Message != tc.msg {
				t.Fatalf("error = %#v\nwant %s %q", err, fs.CodeSandboxDenied, tc.msg)
			}
			if !errors.Is(err, fs.ErrSandboxDenied) {
				t.Errorf("errors.Is(err, ErrSandboxDenied) = false")
			}
			j.untouched(t)
		})
	}
	if _, err := os.Stat(filepath.Join(j.docs, "new.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a write under the read-only root left a file: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(j.docs, "guide.md")); string(got) != "read me" {
		t.Errorf("an edit under the read-only root changed it: %q", got)
	}
}

func TestConfinedAllowed(t *testing.T) {
	j := newJail(t)
	ctx := context.Background()
	if err := os.Mkdir(filepath.Join(j.ws, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(j.ws, "real", "e.txt"), "eee", 0o644)
	mustLink(t, "real", filepath.Join(j.ws, "rel"))                      // relative, inside
	mustLink(t, filepath.Join(j.ws, "real"), filepath.Join(j.ws, "abs")) // absolute, inside
	mustLink(t, "real/../a.txt", filepath.Join(j.ws, "dotdot"))          // ".." that stays inside
	mustLink(t, j.secret, filepath.Join(j.ws, "real", "away"))           // listed, never followed
	for _, tc := range []struct{ verb, path, want string }{
		{"read", "a.txt", "alpha"},
		{"read", "dotdot", "alpha"},
		{"read", "rel/e.txt", "eee"},
		{"read", "abs/e.txt", "eee"},
		{"edit", "rel/e.txt", ""},
		{"read", "abs/e.txt", "EEE"},
		{"write", "abs/new.txt", ""},
		{"read", "real/new.txt", "written"},
		{"list", "rel", "away:other,e.txt:file,new.txt:file"},
		{"read", "../docs/guide.md", "read me"},
		{"list", j.docs, "guide.md:file"},
		{"write", filepath.Join(j.spare, "s.txt"), ""},
		{"read", "../spare/s.txt", "written"},
	} {
		got, err := j.op(ctx, tc.verb, tc.path)
		if tc.verb == "list" {
			got = sortedCSV(got)
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %s = %q, %v; want %q", tc.verb, tc.path, got, err, tc.want)
		}
	}
	// Every alias resolves to one identity, the real path.
	want := filepath.Join(j.ws, "real", "e.txt")
	for _, alias := range []string{"rel/e.txt", "abs/e.txt", "real/e.txt", "real/../rel/e.txt"} {
		if tg, err := j.f.Resolve(ctx, alias, ""); err != nil || tg.Key != want {
			t.Errorf("Resolve(%s) = %+v, %v; want key %s", alias, tg, err, want)
		}
	}
	j.untouched(t)
}

// A dangling symlink is missing whatever its target's spelling: one whose
// absolute target names a missing file inside the workspace is listed as
// other, stats as absent, is not found by a read or a listing and is
// replaced by a write, as a relative one is, although the kernel and
// os.Root refuse every absolute link they meet.
func TestConfinedDanglingAbsoluteLink(t *testing.T) {
	j := newJail(t)
	ctx := context.Background()
	mustLink(t, "gone-rel", filepath.Join(j.ws, "rel"))
	mustLink(t, filepath.Join(j.ws, "gone-abs"), filepath.Join(j.ws, "abs"))
	mustLink(t, filepath.Join(j.ws, "a.txt"), filepath.Join(j.ws, "to-a"))
	got, err := j.op(ctx, "list", ".")
	if want := "a.txt:file,abs:other,rel:other,to-a:file"; err != nil || sortedCSV(got) != want {
		t.Fatalf("list = %q, %v; want %q", sortedCSV(got), err, want)
	}
	for _, name := range []string{"rel", "abs"} {
		tg := mustResolve(t, j.f, name)
		if info, err := j.f.Stat(ctx, tg); info != nil || err != nil {
			t.Errorf("Stat(%s) = %+v, %v; want absent", name, info, err)
		}
		_, err := j.f.ReadText(ctx, tg)
		wantFsErr(t, err, fs.CodeNotFound, `cannot read "`+tg.Path+`": not found`)
		_, err = j.f.ListDir(ctx, tg)
		wantFsErr(t, err, fs.CodeNotFound, `cannot list "`+tg.Path+`": not found`)
		if _, err := j.f.WriteText(ctx, tg, "x", nil); err != nil {
			t.Fatalf("WriteText(%s): %v", name, err)
		}
		if fi, err := os.Lstat(filepath.Join(j.ws, name)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("after the write %s is %v, %v; want a regular file", name, fi, err)
		}
	}
	j.untouched(t)
}

func mustLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func sortedCSV(s string) string {
	parts := strings.Split(s, ",")
	for i := 1; i < len(parts); i++ {
		for k := i; k > 0 && parts[k] < parts[k-1]; k-- {
			parts[k], parts[k-1] = parts[k-1], parts[k]
		}
	}
	return strings.Join(parts, ",")
}

// A 40,000-component path is resolved once, not once per prefix: it
// resolves well inside a 200 ms deadline (the quadratic resolution took
// seconds).
func TestResolveLongPathIsLinear(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    *FS
	}{{"confined", newJail(t).f}, {"unconfined", NewUnconfined(t.TempDir())}} {
		t.Run(tc.name, func(t *testing.T) {
			path := strings.Repeat("d/", 40000) + "x.txt"
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			start := time.Now()
			tg, err := tc.f.Resolve(ctx, path, "")
			if spent := time.Since(start); spent > time.Second {
				t.Fatalf("Resolve took %v", spent)
			}
			// On this shared machine the deadline may win; then it must be
			// reported as such.
			if err != nil && fs.CodeOf(err) != fs.CodeAborted {
				t.Fatalf("Resolve: %v", err)
			}
			if err == nil && tg.Key != filepath.Join(tc.f.Cwd(), path) {
				t.Fatalf("key = %.80q...", tg.Key)
			}
		})
	}
}

// Resolution looks at its context as it goes: cancelled at its second
// look (after 2*32 components of an existing tree), it stops there.
func TestResolveAbortsMidway(t *testing.T) {
	j := newJail(t)
	deep := strings.Repeat("d/", 100)
	if err := os.MkdirAll(filepath.Join(j.ws, deep), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := j.f.Resolve(flipAt(3), deep+"x.txt", "")
	if fs.CodeOf(err) != fs.CodeAborted || err.Error() != "resolve aborted" {
		t.Fatalf("error = %v, want resolve aborted", err)
	}
	_, err = j.f.Lstat(flipAt(3), deep+"x.txt", "")
	if fs.CodeOf(err) != fs.CodeAborted || err.Error() != "lstat aborted" {
		t.Fatalf("error = %v, want lstat aborted", err)
	}
}

func TestResolveSymlinkLoop(t *testing.T) {
	j := newJail(t)
	mustLink(t, "loop", filepath.Join(j.ws, "loop"))
	_, err := j.f.Resolve(context.Background(), "loop/x", "")
	want := `cannot resolve "` + filepath.Join(j.ws, "loop/x") + `": too many levels of symbolic links`
	if fs.CodeOf(err) != fs.CodeIO || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
}

func TestOpenRefusesBadRoots(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	write(t, file, "x", 0o644)
	for _, cfg := range []Config{
		{Cwd: filepath.Join(dir, "missing")},
		{Cwd: file},
		{Cwd: dir, Roots: []Root{{Path: "missing"}}},
	} {
		if f, err := Open(cfg); err == nil {
			f.Close()
			t.Errorf("Open(%+v) succeeded", cfg)
		}
	}
}

// A closed provider refuses to work, with ErrClosed (TOOL_UNAVAILABLE
// through the registry): its root handles are gone, and no call may run on
// a descriptor number reused since.
func TestClosedProvider(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.txt"), "a", 0o644)
	f, err := Open(Config{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	tg := mustResolve(t, f, "a.txt")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = f.ReadText(context.Background(), tg)
	wantClosed(t, err, "read", tg.Path)
	_, err = f.Resolve(context.Background(), "a.txt", "")
	wantClosed(t, err, "resolve", tg.Path)
	_, err = f.WriteText(context.Background(), tg, "b", nil)
	wantClosed(t, err, "write", tg.Path)
	if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != "a" {
		t.Errorf("a.txt = %q after a write on a closed provider", got)
	}
}

// A read-only root inside the workspace makes that subtree read-only, also
// when a link elsewhere in the workspace leads into it.
func TestNestedReadOnlyRoot(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	vendor := filepath.Join(ws, "vendor")
	if err := os.Mkdir(vendor, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(vendor, "lib.go"), "package lib", 0o644)
	mustLink(t, "vendor", filepath.Join(ws, "v"))
	f := confined(t, Config{Cwd: ws, Roots: []Root{{Path: "vendor", ReadOnly: true}}})
	ctx := context.Background()
	for _, path := range []string{"vendor/lib.go", "v/lib.go", "vendor/new.go"} {
		tg, err := f.Resolve(ctx, path, "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteText(ctx, tg, "changed", nil)
		want := `cannot write "` + filepath.Join(ws, path) + `": the root "` + vendor + `" is read-only`
		if fs.CodeOf(err) != fs.CodeSandboxDenied || err.Error() != want {
			t.Errorf("write %s = %v, want %s", path, err, want)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(vendor, "lib.go")); string(got) != "package lib" {
		t.Errorf("lib.go = %q", got)
	}
	tg, err := f.Resolve(ctx, "main.go", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteText(ctx, tg, "package main", nil); err != nil {
		t.Errorf("write outside the read-only subtree: %v", err)
	}
}
