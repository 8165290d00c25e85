// Package fstest checks that a filesystem provider honours the fs seam's
// contract, in the spirit of testing/fstest.TestFS.
//
// The suite prepares its fixtures with package os in a fresh temporary
// directory per subtest, so it fits any provider that operates on the host
// filesystem beneath that directory. Messages and codes are compared
// exactly: they are model-facing. [TestConfinement] checks a provider confined
// to that directory.
package fstest

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
)

// NewFS returns the provider under test with root as its default cwd.
type NewFS func(t *testing.T, root string) fs.FileSystem

// TestFileSystem runs the conformance suite. It needs symlinks.
func TestFileSystem(t *testing.T, newFS NewFS) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, NewFS)
	}{
		{"Resolve", testResolve},
		{"Stat", testStat},
		{"Lstat", testLstat},
		{"Read", testRead},
		{"ReadErrors", testReadErrors},
		{"Stream", testStream},
		{"ListDir", testListDir},
		{"Write", testWrite},
		{"WriteIntent", testWriteIntent},
		{"Edit", testEdit},
		{"EditErrors", testEditErrors},
		{"Symlinks", testSymlinks},
		{"GuardedConcurrency", testGuardedConcurrency},
		{"Cancellation", testCancellation},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newFS) })
	}
}

// ---- fixtures and assertions ------------------------------------------------

// setup returns a provider rooted at a fresh directory, that directory's
// real path, and a background context.
func setup(t *testing.T, newFS NewFS) (fs.FileSystem, string, context.Context) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return newFS(t, root), root, context.Background()
}

func put(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatalf("symlinks are required: %v", err)
	}
}

func resolve(t *testing.T, fsys fs.FileSystem, path string) fs.Target {
	t.Helper()
	tg, err := fsys.Resolve(context.Background(), path, "")
	if err != nil {
		t.Fatalf("Resolve(%q): %v", path, err)
	}
	return tg
}

func version(t *testing.T, fsys fs.FileSystem, tg fs.Target) fs.Version {
	t.Helper()
	info, err := fsys.Stat(context.Background(), tg)
	if err != nil || info == nil {
		t.Fatalf("Stat(%s) = %v, %v", tg.Path, info, err)
	}
	return info.Version
}

// wantErr checks that err is an *fs.Error with code and message.
func wantErr(t *testing.T, err error, code, msg string) {
	t.Helper()
	var fe *fs.Error
	if !errors.As(err, &fe) {
		t.Fatalf("error = %v (%T), want %s %q", err, err, code, msg)
	}
	if fe.Code != code || fe.Message != msg {
		t.Fatalf("error = %s %q, want %s %q", fe.Code, fe.Message, code, msg)
	}
	if !errors.Is(err, &fs.Error{Code: code}) {
		t.Fatalf("errors.Is(%v, code %s) = false", err, code)
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func ptr(s string) *string { return &s }

func strp(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return "\"" + *p + "\""
}

// ---- Resolve (R-023..R-031) ---------------------------------------------------

func testResolve(t *testing.T, newFS NewFS) {
	fsys, root, ctx := setup(t, newFS)
	put(t, filepath.Join(root, "dir", "a.txt"), "a")
	put(t, filepath.Join(root, "afile"), "x")
	other := t.TempDir()

	for _, tc := range []struct{ path, cwd, display string }{
		{"dir/a.txt", "", root + "/dir/a.txt"},            // R-023 provider cwd
		{"a.txt", root + "/dir", root + "/dir/a.txt"},     // R-023 given cwd
		{"a.txt", "dir", root + "/dir/a.txt"},             // relative cwd: against the provider's
		{root + "/dir/a.txt", other, root + "/dir/a.txt"}, // R-024 absolute ignores cwd
		{".", "", root}, // R-026 "." is the cwd itself
		{"dir//./x/../a.txt/", "", root + "/dir/a.txt"},      // R-026 lexical clean
		{"no/such/file.txt", "", root + "/no/such/file.txt"}, // missing is fine
	} {
		tg, err := fsys.Resolve(ctx, tc.path, tc.cwd)
		if err != nil {
			t.Fatalf("Resolve(%q, %q): %v", tc.path, tc.cwd, err)
		}
		if tg.Path != tc.display {
			t.Errorf("Resolve(%q, %q).Path = %q, want %q", tc.path, tc.cwd, tg.Path, tc.display)
		}
	}

	// blank paths (JS trim semantics: U+FEFF is blank too).
	for _, p := range []string{"", "   ", "\t\n", "\uFEFF"} {
		_, err := fsys.Resolve(ctx, p, "")
		wantErr(t, err, fs.CodeNotFound, "file_path must be a non-empty string")
	}
	// an ancestor that is a regular file.
	_, err := fsys.Resolve(ctx, "afile/child.txt", "")
	wantErr(t, err, fs.CodeNotFound, `cannot resolve "`+root+`/afile/child.txt": a parent path segment is not a directory`)

	// the key of a missing file survives its creation (and its parents').
	before := resolve(t, fsys, "new/deep/n.txt")
	put(t, filepath.Join(root, "new", "deep", "n.txt"), "n")
	if after := resolve(t, fsys, "new/deep/n.txt"); after.Key != before.Key {
		t.Errorf("key changed across creation: %q then %q", before.Key, after.Key)
	}
}

// ---- Stat and Lstat (R-124..R-126) ------------------------------------------

func testStat(t *testing.T, newFS NewFS) {
	fsys, root, ctx := setup(t, newFS)
	put(t, filepath.Join(root, "a.txt"), "hello")
	put(t, filepath.Join(root, "afile"), "x")
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}

	info, err := fsys.Stat(ctx, resolve(t, fsys, "a.txt"))
	if err != nil || info == nil || info.Type != fs.TypeFile || info.Size != 5 || info.Version == "" {
		t.Fatalf("Stat(file) = %+v, %v", info, err)
	}
	if again := version(t, fsys, resolve(t, fsys, "a.txt")); again != info.Version {
		t.Errorf("version of an unchanged file moved: %q then %q", info.Version, again)
	}
	dir, err := fsys.Stat(ctx, resolve(t, fsys, "d"))
	if err != nil || dir == nil || dir.Type != fs.TypeDirectory {
		t.Fatalf("Stat(dir) = %+v, %v", dir, err)
	}
	// absent, also when an ancestor turned out to be a file.
	later := resolve(t, fsys, "later/x.txt")
	put(t, filepath.Join(root, "later"), "now a file")
	for _, tg := range []fs.Target{resolve(t, fsys, "missing.txt"), resolve(t, fsys, "no/such/dir/x"), later} {
		if info, err := fsys.Stat(ctx, tg); info != nil || err != nil {
			t.Errorf("Stat(%s) = %+v, %v; want nil, nil", tg.Path, info, err)
		}
	}
	// a same-size rewrite with the mtime restored still changes the version.
	a := filepath.Join(root, "a.txt")
	tg := resolve(t, fsys, "a.txt")
	v1 := version(t, fsys, tg)
	st, _ := os.Stat(a)
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	put(t, a, "HELLO")
	if err := os.Chtimes(a, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if v2 := version(t, fsys, tg); v2 == v1 {
		t.Errorf("version unchanged after a same-size rewrite: %q", v1)
	}
}

func testLstat(t *testing.T, newFS NewFS) {
	fsys, root, ctx := setup(t, newFS)
	put(t, filepath.Join(root, "real.txt"), "abc")
	symlink(t, "real.txt", filepath.Join(root, "link.txt"))

	li, err := fsys.Lstat(ctx, "link.txt", "")
	if err != nil || li == nil || li.Type != fs.TypeSymlink {
		t.Fatalf("Lstat(link) = %+v, %v; want a symlink", li, err)
	}
	if li.Target.Path != root+"/link.txt" || li.Target.Key != resolve(t, fsys, "real.txt").Key {
		t.Errorf("Lstat(link).Target = %+v", li.Target)
	}
	fi, err := fsys.Lstat(ctx, "real.txt", root)
	if err != nil || fi == nil || fi.Type != fs.TypeFile || fi.Size != 3 {
		t.Fatalf("Lstat(file) = %+v, %v", fi, err)
	}
	if ai, err := fsys.Lstat(ctx, "absent", ""); ai != nil || err != nil {
		t.Errorf("Lstat(absent) = %+v, %v; want nil, nil", ai, err)
	}
	_, err = fsys.Lstat(ctx, "  ", "")
	wantErr(t, err, fs.CodeNotFound, "file_path must be a non-empty string")
}

// ---- reading (R-070..R-076) ---------------------------------------------------

// readCases are stored bytes and the text a read returns.
var readCases = []struct{ name, stored, text string }{
	{"plain", "one\ntwo\n", "one\ntwo\n"},
	{"empty", "", ""},
	{"crlf kept", "a\r\nb\r\n", "a\r\nb\r\n"},
	{"lone cr kept", "a\rb", "a\rb"},
	{"bom hidden", "\xEF\xBB\xBFa\nb", "a\nb"},
	{"only bom", "\xEF\xBB\xBF", ""},
	{"second bom kept", "\xEF\xBB\xBF\xEF\xBB\xBFx", "\uFEFFx"}, // only one is a BOM
	{"multibyte", "héllo wörld ✓ 😀\n", "héllo wörld ✓ 😀\n"},
	{"late nul", strings.Repeat("a", 8192) + "\x00b", strings.Repeat("a", 8192) + "\x00b"},
}

func testRead(t *testing.T, newFS NewFS) {
	fsys, root, ctx := setup(t, newFS)
	for _, tc := range readCases {
		t.Run(tc.name, func(t *testing.T) {
			put(t, filepath.Join(root, tc.name), tc.stored)
			tg := resolve(t, fsys, tc.name)
			text, err := fsys.ReadText(ctx, tg)
			if err != nil || text != tc.text {
				t.Fatalf("ReadText = %q, %v; want %q", text, err, tc.text)
			}
			if got := streamAll(t, fsys, tg); got != tc.text {
				t.Fatalf("StreamText = %q; want %q", got, tc.text)
			}
		})
	}
}

// readErrorCases are stored bytes a read refuses, with the message tail.
var readErrorCases = []struct{ name, stored, tail string }{
	{"nul", "ab\x00cd", "binary file"},
	{"nul at 8191", strings.Repeat("a", 8191) + "\x00", "binary file"},              // R-070 edge
	{"binary beats invalid", "\xFF\x00", "binary file"},                             // binary wins over invalid UTF-8
	{"bad byte", "a\xFFb", "invalid UTF-8 text"},
	{"truncated at eof", "ab\xE2\x82", "invalid UTF-8 text"},
	{"surrogate", "a\xED\xA0\x80b", "invalid UTF-8 text"},
	{"overlong", "a\xC0\xAFb", "invalid UTF-8 text"},
	{"deep invalid", strings.Repeat("ok\n", 100000) + "\xC3", "invalid UTF-8 text"}, // R-072, far past the first chunk
}

func testReadErrors(t *testing.T, newFS NewFS) {
	fsys, root, ctx := setup(t, newFS)
	for _, tc := range readErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			put(t, filepath.Join(root, tc.name), tc.stored)
			tg := resolve(t, fsys, tc.name)
			msg := `cannot read "` + tg.Path + `": ` + tc.tail
			_, err := fsys.ReadText(ctx, tg)
			wantErr(t, err, fs.CodeNotText, msg)
			wantErr(t, streamErr(t, fsys, tg), fs.CodeNotText, msg)
		})
	}
	// the type is checked by the read itself.
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, code, tail string }{
		{"missing.txt", fs.CodeNotFound, "not found"},
		{"d", fs.CodeNotRegularFile, "not a regular file"},
	} {
		tg := resolve(t, fsys, tc.path)
		msg := `cannot read "` + tg.Path + `": ` + tc.tail
		_, err := fsys.ReadText(ctx, tg)
		wantErr(t, err, tc.code, msg)
		_, err = fsys.StreamText(ctx, tg)
		wantErr(t, err, tc.code, msg)
	}
}

func streamAll(t *testing.T, fsys fs.FileSystem, tg fs.Target) string {
	t.Helper()
	rc, err := fsys.StreamText(context.Background(), tg)
	if err != nil {
		t.Fatalf("StreamText: %v", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("StreamText read: %v", err)
	}
	return string(b)
}

// streamErr reads the whole stream and returns the error that ended it.
func streamErr(t *testing.T, fsys fs.FileSystem, tg fs.Target) error {
	t.Helper()
	rc, err := fsys.StreamText(context.Background(), tg)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(io.Discard, rc)
	return err
}

// testStream checks that chunking never shows: multibyte characters are
// spread across every plausible buffer boundary, and reads of any size see
// the same text.
func testStream(t *testing.T, newFS NewFS) {
	fsys, root, _ := setup(t, newFS)
	var b strings.Builder
	b.WriteString("\xEF\xBB\xBF")
	for i := 0; b.Len() < 600<<10; i++ {
		b.WriteString("ligne é ✓ 😀 ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\r\n")
	}
	stored := b.String()
	put(t, filepath.Join(root, "big.txt"), stored)
	tg := resolve(t, fsys, "big.txt")
	want := strings.TrimPrefix(stored, "\xEF\xBB\xBF")
	if got := streamAll(t, fsys, tg); got != want {
		t.Fatalf("StreamText differs from the stored text (len %d vs %d)", len(got), len(want))
	}
	for _, size := range []int{1, 3, 4095, 8193} {
		rc, err := fsys.StreamText(context.Background(), tg)
		if err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		buf := make([]byte, size)
		for {
			n, err := rc.Read(buf)
			got.Write(buf[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("Read(%d): %v", size, err)
			}
		}
		rc.Close()
		if got.String() != want {
			t.Fatalf("reads of %d bytes changed the text", size)
		}
	}
	if seeker, ok := fsys.(fs.TextSeeker); ok {
		testSeeker(t, fsys, seeker, tg, want)
	}
}

// testSeeker checks the optional TextSeeker: offsets are in decoded text,
// and a changed file is stale.
func testSeeker(t *testing.T, fsys fs.FileSystem, seeker fs.TextSeeker, tg fs.Target, want string) {
	ctx := context.Background()
	v := version(t, fsys, tg)
	for _, off := range []int{0, 1, strings.Index(want, "\n") + 1, len(want) / 2, len(want)} {
		for off < len(want) && (want[off]&0xC0) == 0x80 {
			off++ // a character boundary, as a line index holds
		}
		rc, err := seeker.StreamTextFrom(ctx, tg, v, int64(off))
		if err != nil {
			t.Fatalf("StreamTextFrom(%d): %v", off, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(b) != want[off:] {
			t.Fatalf("StreamTextFrom(%d) = %d bytes, %v; want %d bytes", off, len(b), err, len(want)-off)
		}
	}
	put(t, tg.Key, "changed")
	_, err := seeker.StreamTextFrom(ctx, tg, v, 0)
	wantErr(t, err, fs.CodeStaleVersion, `cannot read "`+tg.Path+`": file changed since it was read`)
	if err := os.Remove(tg.Key); err != nil {
		t.Fatal(err)
	}
	_, err = seeker.StreamTextFrom(ctx, tg, v, 0)
	wantErr(t, err, fs.CodeStaleVersion, `cannot read "`+tg.Path+`": file no longer exists`)
}

// ---- ListDir (R-045..R-048, R-129) -------------------------------------------

func testListDir(t *testing.T, newFS NewFS) {
	fsys, root, ctx := setup(t, newFS)
	put(t, filepath.Join(root, "w", "a.txt"), "abc")
	put(t, filepath.Join(root, "w", "sub", "x"), "")
	put(t, filepath.Join(root, "elsewhere", "f.txt"), "12345")
	symlink(t, "sub", filepath.Join(root, "w", "to-dir"))
	symlink(t, "../elsewhere/f.txt", filepath.Join(root, "w", "to-file"))
	symlink(t, "nowhere", filepath.Join(root, "w", "broken"))

	dir := resolve(t, fsys, "w")
	entries, err := fsys.ListDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		typ  fs.Type
		key  string
		size int64
	}{
		"a.txt":   {fs.TypeFile, root + "/w/a.txt", 3},
		"sub":     {fs.TypeDirectory, root + "/w/sub", -1},
		"to-dir":  {fs.TypeDirectory, root + "/w/sub", -1},
		"to-file": {fs.TypeFile, root + "/elsewhere/f.txt", 5},
		"broken":  {fs.TypeOther, root + "/w/broken", -1},
	}
	if len(entries) != len(want) {
		t.Fatalf("ListDir = %d entries, want %d: %+v", len(entries), len(want), entries)
	}
	for _, e := range entries {
		w, ok := want[e.Name]
		if !ok {
			t.Fatalf("unexpected entry %q", e.Name)
		}
		if e.Type != w.typ || e.Size != w.size || e.Target.Key != w.key || e.Target.Path != dir.Path+"/"+e.Name {
			t.Errorf("entry %q = %+v; want type %s size %d key %s", e.Name, e, w.typ, w.size, w.key)
		}
		if (e.Version == "") != (e.Name == "broken") {
			t.Errorf("entry %q version %q: only a broken child has none", e.Name, e.Version)
		}
		if e.Type == fs.TypeFile {
			if v := version(t, fsys, e.Target); v != e.Version {
				t.Errorf("entry %q version %q, Stat says %q", e.Name, e.Version, v)
			}
		}
	}
	if err := os.Mkdir(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if entries, err := fsys.ListDir(ctx, resolve(t, fsys, "empty")); err != nil || len(entries) != 0 {
		t.Errorf("ListDir(empty) = %+v, %v", entries, err)
	}
	missing := resolve(t, fsys, "nope")
	_, err = fsys.ListDir(ctx, missing)
	wantErr(t, err, fs.CodeNotFound, `cannot list "`+missing.Path+`": not found`)
	file := resolve(t, fsys, "w/a.txt")
	_, err = fsys.ListDir(ctx, file)
	wantErr(t, err, fs.CodeNotDirectory, `cannot list "`+file.Path+`": not a directory`)

	// NameLister names and types the children as ListDir does, fails as
	// it fails, and vouches for no listing of a directory that changed
	// just now.
	if l, ok := fsys.(fs.NameLister); ok {
		got := map[string]fs.Type{}
		v, err := l.ListNames(ctx, dir, func(name string, typ fs.Type) error { got[name] = typ; return nil })
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Errorf("ListNames = %v, want the %d children ListDir lists", got, len(want))
		}
		for name, w := range want {
			if got[name] != w.typ {
				t.Errorf("ListNames typed %q %q, want %q", name, got[name], w.typ)
			}
		}
		if v != "" {
			t.Errorf("ListNames vouched (%q) for a directory changed just now", v)
		}
		_, err = l.ListNames(ctx, missing, func(string, fs.Type) error { return nil })
		wantErr(t, err, fs.CodeNotFound, `cannot list "`+missing.Path+`": not found`)
		_, err = l.ListNames(ctx, file, func(string, fs.Type) error { return nil })
		wantErr(t, err, fs.CodeNotDirectory, `cannot list "`+file.Path+`": not a directory`)
	}
}

// ---- WriteText (R-077..R-091) -------------------------------------------------

func testWrite(t *testing.T, newFS NewFS) {
	fsys, root, ctx := setup(t, newFS)

	// create, parents made, exact bytes, version = Stat's.
	tg := resolve(t, fsys, "p/q/new.txt")
	out, err := fsys.WriteText(ctx, tg, "a\r\nb", nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Operation != fs.OpCreate || out.Before != nil || out.After != "a\nb" {
		t.Errorf("create = %+v (before %s)", out, strp(out.Before))
	}
	if got := get(t, filepath.Join(root, "p/q/new.txt")); got != "a\r\nb" {
		t.Errorf("bytes on disk = %q", got)
	}
	if v := version(t, fsys, tg); out.Version != v {
		t.Errorf("post-write version %q, Stat says %q", out.Version, v)
	}
	if _, err := fsys.WriteText(ctx, resolve(t, fsys, "empty.txt"), "", nil); err != nil {
		t.Fatal(err) // empty content is a file
	}
	if got := get(t, filepath.Join(root, "empty.txt")); got != "" {
		t.Errorf("empty write stored %q", got)
	}

	// update reports the prior text, BOM stripped and LF-normalised,
	// or nil when it was not text; the write goes on either way.
	for _, tc := range []struct {
		name, prior string
		before      *string
	}{
		{"text", "\xEF\xBB\xBFold\r\nline\n", ptr("old\nline\n")},
		{"binary", "a\x00b", nil},
		{"late nul", strings.Repeat("x", 9000) + "\x00", nil},
		{"invalid", "a\xFFb", nil},
	} {
		path := filepath.Join(root, "upd-"+tc.name)
		put(t, path, tc.prior)
		out, err := fsys.WriteText(ctx, resolve(t, fsys, path), "new\n", nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if out.Operation != fs.OpUpdate || strp(out.Before) != strp(tc.before) || out.After != "new\n" {
			t.Errorf("%s: update = %+v before %s, want before %s", tc.name, out, strp(out.Before), strp(tc.before))
		}
		if got := get(t, path); got != "new\n" {
			t.Errorf("%s: bytes on disk = %q", tc.name, got)
		}
	}

	// a directory is not replaced, and this beats any intent.
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := resolve(t, fsys, "d")
	for _, intent := range []*fs.WriteIntent{nil, {Kind: fs.CreateIfAbsent}, {Kind: fs.ReplaceIfVersion, Version: "x"}} {
		_, err := fsys.WriteText(ctx, d, "x", intent)
		wantErr(t, err, fs.CodeNotRegularFile, `cannot write "`+d.Path+`": not a regular file`)
	}
}

func testWriteIntent(t *testing.T, newFS NewFS) {
	fsys, root, ctx := setup(t, newFS)
	path := filepath.Join(root, "a.txt")
	put(t, path, "orig")
	tg := resolve(t, fsys, "a.txt")
	v := version(t, fsys, tg)

	// createIfAbsent refuses an existing file, untouched.
	_, err := fsys.WriteText(ctx, tg, "x", &fs.WriteIntent{Kind: fs.CreateIfAbsent})
	wantErr(t, err, fs.CodeNotObserved, `cannot overwrite existing "`+tg.Path+`" without reading it first`)
	if got := get(t, path); got != "orig" {
		t.Fatalf("refused write changed the file: %q", got)
	}
	// ... and creates a missing one.
	nt := resolve(t, fsys, "n.txt")
	if out, err := fsys.WriteText(ctx, nt, "n", &fs.WriteIntent{Kind: fs.CreateIfAbsent}); err != nil || out.Operation != fs.OpCreate {
		t.Fatalf("createIfAbsent on a missing file = %+v, %v", out, err)
	}
	// replaceIfVersion at the version succeeds and returns the next one.
	out, err := fsys.WriteText(ctx, tg, "v2", &fs.WriteIntent{Kind: fs.ReplaceIfVersion, Version: v})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.WriteText(ctx, tg, "v3", &fs.WriteIntent{Kind: fs.ReplaceIfVersion, Version: out.Version}); err != nil {
		t.Fatalf("write at the post-write version: %v", err)
	}
	// ... a stale version is refused, untouched.
	_, err = fsys.WriteText(ctx, tg, "x", &fs.WriteIntent{Kind: fs.ReplaceIfVersion, Version: v})
	wantErr(t, err, fs.CodeStaleVersion, `cannot write "`+tg.Path+`": file changed since it was read`)
	if got := get(t, path); got != "v3" {
		t.Fatalf("stale write changed the file: %q", got)
	}
	// ... a deleted file is stale and not recreated.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, err = fsys.WriteText(ctx, tg, "x", &fs.WriteIntent{Kind: fs.ReplaceIfVersion, Version: v})
	wantErr(t, err, fs.CodeStaleVersion, `cannot write "`+tg.Path+`": file no longer exists`)
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale write recreated the file: %v", err)
	}
}

// ---- EditText (R-092..R-109) --------------------------------------------------

var editCases = []struct {
	name, stored string
	edit         fs.EditRequest
	want         string // bytes on disk
	before       string
	after        string
	n            int
}{
	{"single", "a OLD b", fs.EditRequest{Old: "OLD", New: "NEW"}, "a NEW b", "a OLD b", "a NEW b", 1},
	{"replace all", "a a a", fs.EditRequest{Old: "a", New: "b", ReplaceAll: true}, "b b b", "a a a", "b b b", 3},
	{"non-overlapping", "aaa", fs.EditRequest{Old: "aa", New: "X"}, "Xa", "aaa", "Xa", 1},
	{"delete", "keep drop keep", fs.EditRequest{Old: " drop", New: ""}, "keep keep", "keep drop keep", "keep keep", 1},
	{"literal", "price", fs.EditRequest{Old: "price", New: "$& $1"}, "$& $1", "price", "$& $1", 1},
	{"crlf kept", "a\r\nOLD\r\nb\r\n", fs.EditRequest{Old: "OLD\r\n", New: "NEW\n"}, "a\r\nNEW\r\nb\r\n", "a\nOLD\nb\n", "a\nNEW\nb\n", 1},
	{"mixed to lf", "a\r\nb\nc\n", fs.EditRequest{Old: "b", New: "B"}, "a\nB\nc\n", "a\nb\nc\n", "a\nB\nc\n", 1},
	{"tie is lf", "a\r\nb\nc", fs.EditRequest{Old: "c", New: "C"}, "a\nb\nC", "a\nb\nc", "a\nb\nC", 1},
	{"lone cr kept", "a\rb\n", fs.EditRequest{Old: "b", New: "B"}, "a\rB\n", "a\rb\n", "a\rB\n", 1},
	{"bom kept", "\xEF\xBB\xBFx = 1\n", fs.EditRequest{Old: "1", New: "2"}, "\xEF\xBB\xBFx = 2\n", "x = 1\n", "x = 2\n", 1},                // port decision
	{"multibyte", "héllo 😀", fs.EditRequest{Old: "😀", New: "✓"}, "héllo ✓", "héllo 😀", "héllo ✓", 1},
}

func testEdit(t *testing.T, newFS NewFS) {
	fsys, root, ctx := setup(t, newFS)
	for _, tc := range editCases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(root, tc.name)
			put(t, path, tc.stored)
			tg := resolve(t, fsys, path)
			out, err := fsys.EditText(ctx, tg, tc.edit, &fs.EditIntent{Version: version(t, fsys, tg)})
			if err != nil {
				t.Fatal(err)
			}
			if got := get(t, path); got != tc.want {
				t.Errorf("disk = %q, want %q", got, tc.want)
			}
			if out.Before != tc.before || out.After != tc.after || out.Replacements != tc.n {
				t.Errorf("outcome = %+v, want before %q after %q n %d", out, tc.before, tc.after, tc.n)
			}
			if v := version(t, fsys, tg); v != out.Version {
				t.Errorf("post-edit version %q, Stat says %q", out.Version, v)
			}
		})
	}
	// the post-edit version authorises the next edit.
	path := filepath.Join(root, "chain")
	put(t, path, "one two")
	tg := resolve(t, fsys, path)
	out, err := fsys.EditText(ctx, tg, fs.EditRequest{Old: "one", New: "ONE"}, &fs.EditIntent{Version: version(t, fsys, tg)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.EditText(ctx, tg, fs.EditRequest{Old: "two", New: "TWO"}, &fs.EditIntent{Version: out.Version}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, path); got != "ONE TWO" {
		t.Errorf("chained edits = %q", got)
	}
}

func testEditErrors(t *testing.T, newFS NewFS) {
	fsys, root, ctx := setup(t, newFS)
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, stored string // stored "" with name "missing": no file
		edit         fs.EditRequest
		stale        bool // guard with a wrong version
		code, tail   string
	}{
		{"missing", "", fs.EditRequest{Old: "a", New: "b"}, false, fs.CodeStaleVersion, "cannot edit %q: file changed since it was read"},
		{"d", "", fs.EditRequest{Old: "a", New: "b"}, false, fs.CodeNotRegularFile, "cannot edit %q: not a regular file"},
		{"no match", "abc", fs.EditRequest{Old: "x", New: "y"}, false, fs.CodeEditNotFound, "old_string was not found in %q"},
		{"ambiguous", "x x x", fs.EditRequest{Old: "x", New: "y"}, false, fs.CodeAmbiguousEdit, "old_string matched 3 times in %q; provide a more specific old_string or set replace_all to true"},
		{"stale beats no match", "abc", fs.EditRequest{Old: "x", New: "y"}, true, fs.CodeStaleVersion, "cannot edit %q: file changed since it was read"},
		{"stale beats ambiguous", "x x", fs.EditRequest{Old: "x", New: "y"}, true, fs.CodeStaleVersion, "cannot edit %q: file changed since it was read"},
		{"nul anywhere", strings.Repeat("a", 9000) + "\x00 a", fs.EditRequest{Old: "a", New: "b"}, false, fs.CodeNotText, "cannot edit %q: binary file"},
		{"invalid", "a\xFFb", fs.EditRequest{Old: "a", New: "b"}, false, fs.CodeNotText, "cannot edit %q: invalid UTF-8 text"},
		{"binary beats invalid", "\xFF\x00a", fs.EditRequest{Old: "a", New: "b"}, false, fs.CodeNotText, "cannot edit %q: binary file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(root, tc.name)
			if tc.stored != "" {
				put(t, path, tc.stored)
			}
			tg := resolve(t, fsys, path)
			var intent *fs.EditIntent
			if tc.stale {
				intent = &fs.EditIntent{Version: "0:0:0:0:0"}
			}
			_, err := fsys.EditText(ctx, tg, tc.edit, intent)
			wantErr(t, err, tc.code, strings.ReplaceAll(tc.tail, "%q", `"`+tg.Path+`"`))
			if tc.stored != "" {
				if got := get(t, path); got != tc.stored {
					t.Errorf("a refused edit changed the file: %q", got)
				}
			}
		})
	}
}

// ---- symlinks (R-027, R-085, R-086, R-106) ------------------------------------

func testSymlinks(t *testing.T, newFS NewFS) {
	fsys, root, ctx := setup(t, newFS)
	real := filepath.Join(root, "real.txt")
	link := filepath.Join(root, "link.txt")
	put(t, real, "hello")
	symlink(t, "real.txt", link)

	viaLink, viaReal := resolve(t, fsys, "link.txt"), resolve(t, fsys, "real.txt")
	if viaLink.Key != viaReal.Key || viaLink.Path != link {
		t.Fatalf("alias targets %+v and %+v", viaLink, viaReal)
	}
	if version(t, fsys, viaLink) != version(t, fsys, viaReal) {
		t.Fatal("aliases have different versions")
	}
	if _, err := fsys.EditText(ctx, viaLink, fs.EditRequest{Old: "hello", New: "bye"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.WriteText(ctx, viaLink, "bye!", nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	if got := get(t, real); got != "bye!" {
		t.Fatalf("real file = %q", got)
	}

	// R-028 through a symlinked ancestor.
	if err := os.Mkdir(filepath.Join(root, "realdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, "realdir", filepath.Join(root, "linkdir"))
	before := resolve(t, fsys, "linkdir/sub/new.txt")
	if before.Key != root+"/realdir/sub/new.txt" {
		t.Errorf("missing key through a linked ancestor = %q", before.Key)
	}
	if _, err := fsys.WriteText(ctx, before, "x", nil); err != nil {
		t.Fatal(err)
	}
	if after := resolve(t, fsys, "linkdir/sub/new.txt"); after.Key != before.Key {
		t.Errorf("key changed across creation: %q then %q", before.Key, after.Key)
	}

	// a dangling link resolves to itself; a write replaces it with a
	// regular file and does not create its target.
	dangling := filepath.Join(root, "dangling")
	symlink(t, "ghost.txt", dangling)
	tg := resolve(t, fsys, "dangling")
	if tg.Key != dangling {
		t.Errorf("dangling link key = %q, want the link", tg.Key)
	}
	if info, err := fsys.Stat(ctx, tg); info != nil || err != nil {
		t.Errorf("Stat(dangling) = %+v, %v; want absent", info, err)
	}
	if _, err := fsys.WriteText(ctx, tg, "now real", nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dangling); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("dangling link not replaced by a regular file: %v %v", fi, err)
	}
	if _, err := os.Lstat(filepath.Join(root, "ghost.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dangling link's target was created: %v", err)
	}
}

// ---- concurrency (R-128) ------------------------------------------------------

// testGuardedConcurrency races mutations guarded by one version: exactly one
// may win, every other one must be stale.
func testGuardedConcurrency(t *testing.T, newFS NewFS) {
	fsys, root, _ := setup(t, newFS)
	const racers, rounds = 4, 25
	kinds := []string{"write/write", "edit/edit", "write/edit"}
	for _, kind := range kinds {
		t.Run(strings.ReplaceAll(kind, "/", "-"), func(t *testing.T) {
			path := filepath.Join(root, strings.ReplaceAll(kind, "/", "-"))
			symlink(t, filepath.Base(path), path+".link")
			for round := 0; round < rounds; round++ {
				put(t, path, "seed x")
				// The file and a symlink to it: the lock must be by key.
				tg := resolve(t, fsys, path)
				alias := resolve(t, fsys, path+".link")
				v := version(t, fsys, tg)
				var wg sync.WaitGroup
				errs := make([]error, racers)
				start := make(chan struct{})
				for i := range racers {
					wg.Go(func() {
						target := tg
						if i%2 == 1 {
							target = alias
						}
						<-start
						if useEdit := strings.Split(kind, "/")[i%2] == "edit"; useEdit {
							_, errs[i] = fsys.EditText(context.Background(), target, fs.EditRequest{Old: "x", New: "y"}, &fs.EditIntent{Version: v})
						} else {
							_, errs[i] = fsys.WriteText(context.Background(), target, "w", &fs.WriteIntent{Kind: fs.ReplaceIfVersion, Version: v})
						}
					})
				}
				close(start)
				wg.Wait()
				wins := 0
				for _, err := range errs {
					switch {
					case err == nil:
						wins++
					case !errors.Is(err, fs.ErrStaleVersion):
						t.Fatalf("round %d: unexpected error %v", round, err)
					}
				}
				if wins != 1 {
					t.Fatalf("round %d: %d guarded mutations at one version succeeded, want exactly 1", round, wins)
				}
			}
		})
	}
	// Unguarded mutations all succeed, one after the other.
	path := filepath.Join(root, "unguarded")
	put(t, path, "")
	tg := resolve(t, fsys, path)
	var wg sync.WaitGroup
	for range racers {
		wg.Go(func() {
			if _, err := fsys.WriteText(context.Background(), tg, "same", nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := get(t, path); got != "same" {
		t.Fatalf("after %d unguarded writes the file holds %q, want %q (a torn or lost write)", racers, got, "same")
	}
}

// ---- cancellation (R-031, R-048, R-076, R-091, R-108, R-124, R-125) -----------

func testCancellation(t *testing.T, newFS NewFS) {
	fsys, root, _ := setup(t, newFS)
	put(t, filepath.Join(root, "a.txt"), "abc")
	file := resolve(t, fsys, "a.txt")
	dir := resolve(t, fsys, ".")
	fresh := resolve(t, fsys, "sub/new.txt")
	ctx := canceled()

	_, err := fsys.Resolve(ctx, "a.txt", "")
	wantErr(t, err, fs.CodeAborted, "resolve aborted")
	_, err = fsys.Stat(ctx, file)
	wantErr(t, err, fs.CodeAborted, "stat aborted")
	_, err = fsys.Lstat(ctx, "a.txt", "")
	wantErr(t, err, fs.CodeAborted, "lstat aborted")
	_, err = fsys.ListDir(ctx, dir)
	wantErr(t, err, fs.CodeAborted, "list aborted")
	_, err = fsys.ReadText(ctx, file)
	wantErr(t, err, fs.CodeAborted, "read aborted")
	_, err = fsys.StreamText(ctx, file)
	wantErr(t, err, fs.CodeAborted, "read aborted")
	// a new file is not created; replacing fails in the pre-read.
	_, err = fsys.WriteText(ctx, fresh, "x", nil)
	wantErr(t, err, fs.CodeAborted, "write aborted")
	if _, err := os.Lstat(filepath.Join(root, "sub")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an aborted write created its parent: %v", err)
	}
	_, err = fsys.WriteText(ctx, file, "x", nil)
	wantErr(t, err, fs.CodeAborted, "read aborted")
	// the existence and version checks come first.
	_, err = fsys.EditText(ctx, file, fs.EditRequest{Old: "a", New: "b"}, nil)
	wantErr(t, err, fs.CodeAborted, "edit aborted")
	_, err = fsys.EditText(ctx, fresh, fs.EditRequest{Old: "a", New: "b"}, nil)
	wantErr(t, err, fs.CodeStaleVersion, `cannot edit "`+fresh.Path+`": file changed since it was read`)
	if got := get(t, filepath.Join(root, "a.txt")); got != "abc" {
		t.Errorf("aborted mutations changed the file: %q", got)
	}

	// A stream cancelled midway fails on its next Read.
	put(t, filepath.Join(root, "big.txt"), strings.Repeat("line\n", 100000))
	live, cancel := context.WithCancel(context.Background())
	rc, err := fsys.StreamText(live, resolve(t, fsys, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := rc.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for err == nil && time.Now().Before(deadline) {
		_, err = rc.Read(make([]byte, 4096))
	}
	wantErr(t, err, fs.CodeAborted, "read aborted")
}

// ---- confinement --------------------------------------------------------------

// TestConfinement checks a provider that newFS confines to root: paths
// that leave root, lexically or through a symlink, are refused with
// CodeSandboxDenied and a message that names the path, and nothing outside
// is read, created or changed; symlinks that stay inside work as usual.
func TestConfinement(t *testing.T, newFS NewFS) {
	fsys, root, ctx := setup(t, newFS)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "secret.txt")
	put(t, secret, "secret")
	put(t, filepath.Join(root, "in", "a.txt"), "inside")
	symlink(t, outside, filepath.Join(root, "out"))
	symlink(t, secret, filepath.Join(root, "secret"))
	symlink(t, "in", filepath.Join(root, "stay"))

	rel, err := filepath.Rel(root, filepath.Join(outside, "new.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{rel, secret, "out/secret.txt", "out/new.txt", "out", "secret"} {
		_, err := fsys.Resolve(ctx, p, "")
		var fe *fs.Error
		if !errors.As(err, &fe) || fe.Code != fs.CodeSandboxDenied {
			t.Errorf("Resolve(%q) = %v; want %s", p, err, fs.CodeSandboxDenied)
			continue
		}
		display := p
		if !filepath.IsAbs(p) {
			display = filepath.Join(root, p)
		}
		if !strings.Contains(fe.Message, `"`+display+`"`) {
			t.Errorf("Resolve(%q): message %q does not name %q", p, fe.Message, display)
		}
	}
	// A link out is listed, but nothing of its target is reported.
	entries, err := fsys.ListDir(ctx, resolve(t, fsys, "."))
	if err != nil {
		t.Fatal(err)
	}
	links := 0
	for _, e := range entries {
		if e.Name == "out" || e.Name == "secret" {
			links++
			if e.Type != fs.TypeOther || e.Version != "" || e.Size != -1 {
				t.Errorf("entry %q = %+v; want other, no version, no size", e.Name, e)
			}
		}
	}
	if links != 2 {
		t.Errorf("the listing shows %d of the 2 links out (out, secret): %+v", links, entries)
	}
	// Links that stay inside resolve to the real file and work.
	via := resolve(t, fsys, "stay/a.txt")
	if via.Key != resolve(t, fsys, "in/a.txt").Key {
		t.Errorf("key through an inside link = %q", via.Key)
	}
	if _, err := fsys.WriteText(ctx, via, "changed", nil); err != nil {
		t.Fatal(err)
	}
	if got := get(t, filepath.Join(root, "in", "a.txt")); got != "changed" {
		t.Errorf("write through an inside link left %q", got)
	}
	names, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || get(t, secret) != "secret" {
		t.Errorf("outside changed: %d entries, secret %q", len(names), get(t, secret))
	}
}
