package toolfs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/fslocal"
	"github.com/gordis-run/gordis/plugins/fspolicy"
	"github.com/gordis-run/gordis/plugins/toolfs"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// session is the smallest registry.Session: its identity is the policy owner.
type session struct {
	cwd  string
	done chan struct{}
}

func newSession(cwd string) *session     { return &session{cwd: cwd, done: make(chan struct{})} }
func (s *session) ID() string            { return "session:" + s.cwd }
func (s *session) Cwd() string           { return s.cwd }
func (s *session) Done() <-chan struct{} { return s.done }

// counting wraps the real local provider to count the calls a tool makes.
type counting struct {
	fs.FileSystem
	seeker                                fs.TextSeeker
	stats, reads, streams, seeks, seeksAt atomic.Int32
	scans                                 atomic.Int32 // ScanLines, through scanning
	streamed                              atomic.Int64 // bytes delivered by StreamTextFrom
	stale                                 atomic.Bool  // StreamTextFrom reports a changed file
	onStream                              func()       // runs when a stream opens (not concurrently)
}

func (c *counting) Stat(ctx context.Context, t fs.Target) (*fs.Info, error) {
	c.stats.Add(1)
	return c.FileSystem.Stat(ctx, t)
}

func (c *counting) ReadText(ctx context.Context, t fs.Target) (string, error) {
	c.reads.Add(1)
	return c.FileSystem.ReadText(ctx, t)
}

func (c *counting) StreamText(ctx context.Context, t fs.Target) (io.ReadCloser, error) {
	c.streams.Add(1)
	return c.FileSystem.StreamText(ctx, t)
}

func (c *counting) StreamTextFrom(ctx context.Context, t fs.Target, v fs.Version, offset int64) (io.ReadCloser, error) {
	c.seeks.Add(1)
	if offset > 0 {
		c.seeksAt.Add(1)
	}
	if c.onStream != nil {
		c.onStream()
	}
	if c.stale.Load() {
		return nil, fs.Errorf(fs.CodeStaleVersion, "cannot read %q: file changed since it was read", t.Path)
	}
	r, err := c.seeker.StreamTextFrom(ctx, t, v, offset)
	if err != nil {
		return nil, err
	}
	return &countingReader{r, &c.streamed}, nil
}

type countingReader struct {
	io.ReadCloser
	n *atomic.Int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.n.Add(int64(n))
	return n, err
}

// plain hides the optional TextSeeker capability.
type plain struct{ fs.FileSystem }

// seekOnly is the local provider without its LineScanner capability.
type seekOnly struct {
	fs.FileSystem
	fs.TextSeeker
}

// scanning adds the provider's LineScanner to the counting wrapper; onStream
// runs at its first visit, in the middle of the scan.
type scanning struct{ *counting }

func (s scanning) ScanLines(ctx context.Context, t fs.Target, v fs.Version, visit func([]byte, int) error) error {
	s.scans.Add(1)
	first := true
	return s.FileSystem.(fs.LineScanner).ScanLines(ctx, t, v, func(b []byte, n int) error {
		if first && s.onStream != nil {
			s.onStream()
		}
		first = false
		return visit(b, n)
	})
}

type env struct {
	dir    string
	root   *runtime.Context
	tools  *registry.Registry
	prompt *registry.Prompt
	fsys   *counting
	fiber  *runtime.Fiber // toolfs
	seq    atomic.Int64
}

type options struct {
	policy     bool
	noSeeker   bool // hide the provider's TextSeeker capability
	scanner    bool // also offer the provider's LineScanner (counted)
	direct     bool // provide the local provider itself, without counting (benchmarks)
	sequential bool // like direct, without LineScanner (benchmarks)
	config     any
	logs       *runtimetest.Logs // records what the runtime and the plugins log
}

func setup(t testing.TB, o options) *env {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var ropts []runtime.Option
	if o.logs != nil {
		ropts = append(ropts, runtime.WithLogger(slog.New(o.logs)))
	}
	root := runtimetest.New(t, ropts...)
	local := fslocal.NewUnconfined(dir)
	e := &env{dir: dir, root: root, fsys: &counting{FileSystem: local, seeker: local}}
	var provided fs.FileSystem = e.fsys
	switch {
	case o.noSeeker:
		provided = plain{e.fsys}
	case o.scanner:
		provided = scanning{e.fsys}
	case o.direct:
		provided = local
	case o.sequential:
		provided = seekOnly{local, local}
	}
	if err := fs.Service.Provide(root, provided); err != nil {
		t.Fatal(err)
	}
	runtimetest.Plug(t, root, registry.Plugin, nil)
	if o.policy {
		runtimetest.Plug(t, root, fspolicy.Plugin, nil)
	}
	e.fiber = runtimetest.Plug(t, root, toolfs.Plugin, o.config)
	var ok bool
	if e.tools, ok = registry.Tools.Lookup(root); !ok {
		t.Fatal("no tools service")
	}
	if e.prompt, ok = registry.Prompts.Lookup(root); !ok {
		t.Fatal("no prompt service")
	}
	return e
}

func quietRoot() *runtime.Context {
	return runtime.New(runtime.WithLogger(slog.New(slog.DiscardHandler)))
}

// call runs one tool call; args is a Go value marshalled to JSON.
func (e *env) call(s registry.Session, tool string, args any) *registry.Result {
	raw, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return e.tools.Execute(context.Background(), &registry.Call{
		ID: fmt.Sprint(e.seq.Add(1)), Tool: tool, Args: raw, Session: s,
	})
}

func (e *env) path(name string) string { return filepath.Join(e.dir, name) }

func (e *env) write(t testing.TB, name, content string) {
	t.Helper()
	p := e.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *env) content(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(e.path(name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type args = map[string]any

// wantText asserts a successful result's exact text.
func wantText(t *testing.T, r *registry.Result, want string) {
	t.Helper()
	if r.IsError || r.Text != want {
		t.Fatalf("got (error %v) %q\nwant %q", r.IsError, r.Text, want)
	}
}

// wantError asserts an error result's exact text and code ("" = no code).
func wantError(t *testing.T, r *registry.Result, text, code string) {
	t.Helper()
	if !r.IsError || r.Text != text {
		t.Fatalf("got (error %v) %q\nwant %q", r.IsError, r.Text, text)
	}
	got := ""
	if r.Error != nil {
		got = r.Error.Code
	}
	if got != code {
		t.Fatalf("code %q, want %q (%+v)", got, code, r.Error)
	}
	if code != "" && strings.HasPrefix(code, "FS_") && r.Error.Name != "FsError" {
		t.Fatalf("name %q, want FsError", r.Error.Name)
	}
}

//
func TestRegistration(t *testing.T) {
	e := setup(t, options{policy: true})
	defs := e.tools.Definitions()
	var names []string
	schemas := map[string]map[string]any{}
	for _, d := range defs {
		names = append(names, d.Name)
		var s map[string]any
		if err := json.Unmarshal(d.Parameters, &s); err != nil {
			t.Fatal(err)
		}
		schemas[d.Name] = s
	}
	if strings.Join(names, ",") != "list,read,write,edit" {
		t.Fatalf("tools %v", names)
	}
	if !strings.Contains(defs[0].Description, "up to 200 are returned") {
		t.Errorf("list description %q", defs[0].Description)
	}
	prop := func(tool, name, key string) any {
		return schemas[tool]["properties"].(map[string]any)[name].(map[string]any)[key]
	}
	for _, c := range []struct{ tool, name, key, want string }{
		{"list", "path", "type", "string"},
		{"list", "offset", "type", "number"},
		{"read", "offset", "type", "number"},
		{"read", "limit", "type", "number"},
		{"read", "limit", "description", "Maximum number of lines to return. Defaults to 2000."},
		{"read", "file_path", "description", "Path to read, resolved by the filesystem backend."},
		{"edit", "replace_all", "type", "boolean"},
		{"edit", "new_string", "description", "Literal replacement text. Use an empty string to delete the match."},
	} {
		if got := prop(c.tool, c.name, c.key); got != c.want {
			t.Errorf("%s.%s.%s = %v, want %v", c.tool, c.name, c.key, got, c.want)
		}
	}
	for tool, want := range map[string]string{"list": "[]", "read": "[file_path]", "write": "[file_path content]", "edit": "[file_path old_string new_string]"} {
		req, _ := schemas[tool]["required"].([]any)
		if got := fmt.Sprint(req); got != want && !(want == "[]" && req == nil) {
			t.Errorf("%s required %s, want %s", tool, got, want)
		}
		if ap, ok := schemas[tool]["additionalProperties"]; ok && ap == false {
			t.Errorf("%s arguments are closed", tool)
		}
	}
	prompt := e.prompt.Assemble()
	for _, s := range []string{"Use the list tool — not shell ls —", "Use the read tool — not shell commands like cat —",
		"Use the write tool to create files", "Use the edit tool for targeted changes"} {
		if !strings.Contains(prompt, s) {
			t.Errorf("prompt lacks %q", s)
		}
	}
	if i, j := strings.Index(prompt, "Use the list tool"), strings.Index(prompt, "Use the edit tool"); i > j {
		t.Error("prompt sections out of order")
	}
	if err := e.fiber.Dispose(); err != nil {
		t.Fatal(err)
	}
	if n := len(e.tools.Definitions()); n != 0 {
		t.Errorf("%d tools left after disposal", n)
	}
	if p := e.prompt.Assemble(); strings.Contains(p, "list tool") {
		t.Errorf("prompt left after disposal: %q", p)
	}
}

// every cap must be a positive integer.
func TestConfigRejected(t *testing.T) {
	for _, key := range []string{"listMaxEntries", "readLimit", "readMaxLineLength", "readMaxBytes", "readStreamMinSize"} {
		for _, v := range []any{0, 2.5, -1} {
			root := quietRoot()
			f, err := root.Plugin(toolfs.Plugin, map[string]any{key: v})
			if err == nil {
				err = f.Wait()
			}
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q must be a positive integer", key)) {
				t.Errorf("%s=%v: %v", key, v, err)
			}
			root.Close()
		}
	}
}

// configured caps.
func TestConfiguredCaps(t *testing.T) {
	e := setup(t, options{config: toolfs.Config{ListMaxEntries: 1, ReadLimit: 2, ReadMaxLineLength: 3, ReadMaxBytes: 40}})
	if d := e.tools.Definitions(); !strings.Contains(d[0].Description, "up to 1 are returned") || !strings.Contains(string(d[1].Parameters), "Defaults to 2.") {
		t.Fatalf("descriptions %q / %s", d[0].Description, d[1].Parameters)
	}
	e.write(t, "a.txt", "abcdef\nb\nc\nd\n")
	wantText(t, e.call(nil, "read", args{"file_path": "a.txt"}),
		"<path>"+e.path("a.txt")+"</path>\n<type>file</type>\n<content>\n1: abc... (line truncated to 3 chars)\n2: b\n\n(Showing lines 1-2 of 4. Use offset=3 to continue.)\n</content>")
	wantError(t, e.call(nil, "read", args{"file_path": "a.txt", "limit": 3}), "Error: limit must be less than or equal to 2", "")
	wantText(t, e.call(nil, "list", args{}),
		"<path>"+e.dir+"</path>\n<type>directory</type>\n<content>\na.txt\n\n(1 entry: 0 directories, 1 file)\n</content>")
}

// list over a real directory.
func TestList(t *testing.T) {
	e := setup(t, options{})
	e.write(t, "README.txt", "r")
	e.write(t, "package.json", "{}")
	e.write(t, "src/main.go", "package main")
	e.write(t, "docs/x", "")
	if err := os.Symlink("nowhere", e.path("broken")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src", e.path("srclink")); err != nil {
		t.Fatal(err)
	}
	wantText(t, e.call(newSession(e.dir), "list", args{}),
		"<path>"+e.dir+"</path>\n<type>directory</type>\n<content>\ndocs/\nsrc/\nsrclink/\npackage.json\nREADME.txt\nbroken@\n\n(6 entries: 3 directories, 2 files, 1 other)\n</content>")
	wantText(t, e.call(nil, "list", args{"path": "src", "offset": 1.0}),
		"<path>"+e.path("src")+"</path>\n<type>directory</type>\n<content>\nmain.go\n\n(1 entry: 0 directories, 1 file)\n</content>")
	if e.fsys.stats.Load() != 0 {
		t.Errorf("list stat %d times", e.fsys.stats.Load())
	}
	wantError(t, e.call(nil, "list", args{"path": "missing"}), `Error: cannot list "`+e.path("missing")+`": not found`, fs.CodeNotFound)
	wantError(t, e.call(nil, "list", args{"path": "README.txt"}), `Error: cannot list "`+e.path("README.txt")+`": not a directory`, fs.CodeNotDirectory)
	wantError(t, e.call(nil, "list", args{"path": "src", "offset": 2}), `Error: offset 2 is out of range for "`+e.path("src")+`" (1 entries)`, fs.CodeNotFound)
	wantError(t, e.call(nil, "list", args{"path": " "}), "Error: path must be a non-empty string when given", "")
	r := e.call(nil, "list", args{"path": "src"})
	v, ok := r.Value.(*toolfs.ListResult)
	if !ok {
		t.Fatalf("value %T", r.Value)
	}
	if b, _ := json.Marshal(v); string(b) != `{"path":"`+e.path("src")+`","offset":1,"entries":[{"name":"main.go","type":"file"}],"totalEntries":1,"counts":{"directories":0,"files":1,"other":0}}` {
		t.Errorf("value %s", b)
	}
}

// read over a real file.
func TestRead(t *testing.T) {
	e := setup(t, options{})
	e.write(t, "a.txt", "\ufeffhello\r\nworld\n")
	wantText(t, e.call(nil, "read", args{"file_path": "a.txt"}),
		"<path>"+e.path("a.txt")+"</path>\n<type>file</type>\n<content>\n1: hello\n2: world\n\n(End of file - total 2 lines)\n</content>")
	if s, r := e.fsys.stats.Load(), e.fsys.reads.Load(); s != 1 || r != 1 {
		t.Errorf("stats %d, whole reads %d", s, r)
	}
	wantError(t, e.call(nil, "read", args{"file_path": "nope.txt"}), `Error: cannot read "`+e.path("nope.txt")+`": not found`, fs.CodeNotFound)
	if err := os.Mkdir(e.path("d"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantError(t, e.call(nil, "read", args{"file_path": "d"}), `Error: cannot read "`+e.path("d")+`": not a regular file`, fs.CodeNotRegularFile)
	wantError(t, e.call(nil, "read", args{"file_path": "a.txt", "offset": 4}), `Error: offset 4 is out of range for "`+e.path("a.txt")+`" (2 lines)`, fs.CodeNotFound)
	e.write(t, "bin", "a\x00b")
	wantError(t, e.call(nil, "read", args{"file_path": "bin"}), `Error: cannot read "`+e.path("bin")+`": binary file`, fs.CodeNotText)
	e.write(t, "bad", "ok\n\xff")
	wantError(t, e.call(nil, "read", args{"file_path": "bad"}), `Error: cannot read "`+e.path("bad")+`": invalid UTF-8 text`, fs.CodeNotText)
	wantError(t, e.call(nil, "read", args{"file_path": "a.txt", "offset": 1.5}), "Error: offset must be a positive integer", "")
}

// streaming (with and without the line-index cache) renders
// exactly what a whole read renders, for every page of a file.
func TestReadStreamingMatchesWhole(t *testing.T) {
	var b strings.Builder
	b.WriteString("\ufeff") // hidden on every path; index offsets are past it
	for i := range 10000 {
		fmt.Fprintf(&b, "%d %s\r\n", i, strings.Repeat("é", i%50))
	}
	b.WriteString(strings.Repeat("x", 5000)) // a final over-long line, no newline
	text := b.String()
	whole := setup(t, options{config: toolfs.Config{ReadLimit: 700}})
	seek := setup(t, options{config: toolfs.Config{ReadLimit: 700, ReadStreamMinSize: 1}})
	stream := setup(t, options{noSeeker: true, config: toolfs.Config{ReadLimit: 700, ReadStreamMinSize: 1}})
	for _, e := range []*env{whole, seek, stream} {
		e.write(t, "big.txt", text)
	}
	for _, offset := range []int{1, 2, 700, 4096, 4097, 8193, 9999, 10000, 10001, 1} {
		for _, limit := range []int{1, 700} {
			a := args{"file_path": "big.txt", "offset": offset, "limit": limit}
			want := whole.call(nil, "read", a)
			for name, e := range map[string]*env{"seek": seek, "stream": stream} {
				got := e.call(nil, "read", a)
				if strings.ReplaceAll(got.Text, e.dir, "") != strings.ReplaceAll(want.Text, whole.dir, "") {
					t.Fatalf("%s offset %d limit %d:\n%q\nwant\n%q", name, offset, limit, got.Text, want.Text)
				}
			}
		}
	}
	wantError(t, seek.call(nil, "read", args{"file_path": "big.txt", "offset": 10002}),
		`Error: offset 10002 is out of range for "`+seek.path("big.txt")+`" (10001 lines)`, fs.CodeNotFound)
	if whole.fsys.streams.Load()+whole.fsys.seeks.Load() != 0 || stream.fsys.reads.Load() != 0 || seek.fsys.reads.Load() != 0 {
		t.Error("a read took the wrong route")
	}
	// One full scan built the index; every later page started near its
	// offset (within one index stride) and stopped at the end of its page,
	// so the 20 reads streamed far less than 20 whole files.
	if at, streamed := seek.fsys.seeksAt.Load(), seek.fsys.streamed.Load(); at == 0 || streamed > 10*int64(len(text)) {
		t.Errorf("%d reads from an index position, %d bytes streamed for a %d-byte file", at, streamed, len(text))
	}
	// A file that changes between the stat and the pinned stream is read as
	// it is now, through the plain stream, and not indexed.
	seek.fsys.stale.Store(true)
	before := seek.fsys.streams.Load()
	got := seek.call(nil, "read", args{"file_path": "big.txt", "offset": 9999, "limit": 700})
	want := whole.call(nil, "read", args{"file_path": "big.txt", "offset": 9999, "limit": 700})
	if strings.ReplaceAll(got.Text, seek.dir, "") != strings.ReplaceAll(want.Text, whole.dir, "") || seek.fsys.streams.Load() != before+1 {
		t.Fatalf("stale fallback: %q", got.Text)
	}
	seek.fsys.stale.Store(false)
	// A change makes a new version: the cache is not consulted for it.
	seek.write(t, "big.txt", "changed\n")
	wantText(t, seek.call(nil, "read", args{"file_path": "big.txt"}),
		"<path>"+seek.path("big.txt")+"</path>\n<type>file</type>\n<content>\n1: changed\n\n(End of file - total 1 lines)\n</content>")
}

func writeEnvelope(p, verb string) string {
	return "<path>" + p + "</path>\n<type>file</type>\n<content>\n" + verb + "\n</content>"
}

// the
// read-before-write cycle with the policy.
func TestWriteEditWithPolicy(t *testing.T) {
	e := setup(t, options{policy: true})
	s := newSession(e.dir)
	p := e.path("a.txt")

	r := e.call(s, "write", args{"file_path": "a.txt", "content": "one\ntwo\n"})
	wantText(t, r, writeEnvelope(p, "Created file"))
	if b, _ := json.Marshal(r.Value); string(b) != `{"path":"`+p+`","operation":"create","before":null,"after":"one\ntwo\n"}` {
		t.Errorf("write value %s", b)
	}
	// the write recorded its own version, so an edit needs no read.
	r = e.call(s, "edit", args{"file_path": "a.txt", "old_string": "one", "new_string": "ONE"})
	wantText(t, r, "The file "+p+" has been updated successfully.")
	if b, _ := json.Marshal(r.Value); string(b) != `{"path":"`+p+`","before":"one\ntwo\n","after":"ONE\ntwo\n"}` {
		t.Errorf("edit value %s", b)
	}
	// and so does the edit.
	wantText(t, e.call(s, "write", args{"file_path": "a.txt", "content": "x x x"}), writeEnvelope(p, "Updated file"))
	wantText(t, e.call(s, "edit", args{"file_path": "a.txt", "old_string": "x", "new_string": "y", "replace_all": true}),
		"The file "+p+" has been updated. All occurrences were successfully replaced.")
	if got := e.content(t, "a.txt"); got != "y y y" {
		t.Fatalf("disk %q", got)
	}
	if n := e.fsys.stats.Load(); n != 0 {
		t.Errorf("R-090: write/edit stat %d times", n)
	}

	// an unread existing file can be neither replaced nor edited.
	e.write(t, "b.txt", "keep")
	pb := e.path("b.txt")
	wantError(t, e.call(s, "write", args{"file_path": "b.txt", "content": "lost"}), `Error: cannot overwrite existing "`+pb+`" without reading it first`, fs.CodeNotObserved)
	wantError(t, e.call(s, "edit", args{"file_path": "b.txt", "old_string": "keep", "new_string": "x"}), `Error: edit requires reading "`+pb+`" first`, fs.CodeNotObserved)
	// a listing is no observation.
	e.call(s, "list", args{})
	wantError(t, e.call(s, "edit", args{"file_path": "b.txt", "old_string": "keep", "new_string": "x"}), `Error: edit requires reading "`+pb+`" first`, fs.CodeNotObserved)
	// any window authorizes.
	e.write(t, "c.txt", "1\n2\n3\n")
	e.call(s, "read", args{"file_path": "c.txt", "offset": 3, "limit": 1})
	wantText(t, e.call(s, "edit", args{"file_path": "c.txt", "old_string": "1", "new_string": "one"}), "The file "+e.path("c.txt")+" has been updated successfully.")
	if e.content(t, "b.txt") != "keep" {
		t.Fatal("a refused mutation touched the file")
	}
	// a change after the read is stale.
	e.call(s, "read", args{"file_path": "b.txt"})
	e.write(t, "b.txt", "changed elsewhere")
	wantError(t, e.call(s, "edit", args{"file_path": "b.txt", "old_string": "keep", "new_string": "x"}), `Error: cannot edit "`+pb+`": file changed since it was read`, fs.CodeStaleVersion)
	wantError(t, e.call(s, "write", args{"file_path": "b.txt", "content": "x"}), `Error: cannot write "`+pb+`": file changed since it was read`, fs.CodeStaleVersion)
	// read, then deleted elsewhere: it cannot be recreated.
	e.call(s, "read", args{"file_path": "b.txt"})
	if err := os.Remove(pb); err != nil {
		t.Fatal(err)
	}
	wantError(t, e.call(s, "write", args{"file_path": "b.txt", "content": "x"}), `Error: cannot write "`+pb+`": file no longer exists`, fs.CodeStaleVersion)
	// a binary file is never observed.
	e.write(t, "bin", "\x00")
	e.call(s, "read", args{"file_path": "bin"})
	wantError(t, e.call(s, "write", args{"file_path": "bin", "content": "x"}), `Error: cannot overwrite existing "`+e.path("bin")+`" without reading it first`, fs.CodeNotObserved)
}

// two sessions side by side, and no session at all.
func TestSessionsAreSeparateOwners(t *testing.T) {
	e := setup(t, options{policy: true})
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(e.path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sa, sb := newSession(e.path("a")), newSession(e.path("b"))
	// a relative path lands in the session's own workspace.
	wantText(t, e.call(sa, "write", args{"file_path": "f.txt", "content": "A"}), writeEnvelope(e.path("a/f.txt"), "Created file"))
	wantText(t, e.call(sb, "write", args{"file_path": "f.txt", "content": "B"}), writeEnvelope(e.path("b/f.txt"), "Created file"))
	// A's observation of a/f.txt grants B nothing, even by absolute path.
	abs := e.path("a/f.txt")
	wantError(t, e.call(sb, "edit", args{"file_path": abs, "old_string": "A", "new_string": "b"}), `Error: edit requires reading "`+abs+`" first`, fs.CodeNotObserved)
	wantText(t, e.call(sa, "edit", args{"file_path": abs, "old_string": "A", "new_string": "a"}), "The file "+abs+" has been updated successfully.")
	// No session: never an owner.
	e.call(nil, "read", args{"file_path": abs})
	wantError(t, e.call(nil, "edit", args{"file_path": abs, "old_string": "a", "new_string": "x"}), `Error: edit requires reading "`+abs+`" first`, fs.CodeNotObserved)
	wantError(t, e.call(nil, "write", args{"file_path": abs, "content": "x"}), `Error: cannot overwrite existing "`+abs+`" without reading it first`, fs.CodeNotObserved)
	// an alias shares the observation.
	if err := os.Symlink(abs, e.path("a/alias.txt")); err != nil {
		t.Fatal(err)
	}
	wantText(t, e.call(sa, "edit", args{"file_path": "alias.txt", "old_string": "a", "new_string": "aa"}), "The file "+e.path("a/alias.txt")+" has been updated successfully.")
}

// without the policy, mutations are unconditional.
func TestBareProvider(t *testing.T) {
	e := setup(t, options{})
	e.write(t, "a.txt", "old")
	wantText(t, e.call(nil, "write", args{"file_path": "a.txt", "content": "new"}), writeEnvelope(e.path("a.txt"), "Updated file"))
	wantText(t, e.call(nil, "edit", args{"file_path": "a.txt", "old_string": "new", "new_string": "newer"}), "The file "+e.path("a.txt")+" has been updated successfully.")
	wantError(t, e.call(nil, "edit", args{"file_path": "gone.txt", "old_string": "a", "new_string": "b"}), `Error: cannot edit "`+e.path("gone.txt")+`": file changed since it was read`, fs.CodeStaleVersion)
	wantError(t, e.call(nil, "edit", args{"file_path": "a.txt", "old_string": "zzz", "new_string": "b"}), `Error: old_string was not found in "`+e.path("a.txt")+`"`, fs.CodeEditNotFound)
	if e.content(t, "a.txt") != "newer" || e.fsys.stats.Load() != 0 {
		t.Fatal("bare mutation went wrong")
	}
}

// A file too large for the provider to hold (20 MiB against fslocal's
// 12 MiB) is edited and replaced with the same texts; the values have no
// texts to diff and say so.
func TestMutateLargeFile(t *testing.T) {
	e := setup(t, options{policy: true})
	s := newSession(e.dir)
	p := e.path("big.txt")
	line := strings.Repeat("x", 79) + "\n"
	body := strings.Repeat(line, 10<<20/len(line))
	e.write(t, "big.txt", body+"the one line\n"+body)
	e.call(s, "read", args{"file_path": "big.txt", "limit": 1})
	r := e.call(s, "edit", args{"file_path": "big.txt", "old_string": "one", "new_string": "edited"})
	wantText(t, r, "The file "+p+" has been updated successfully.")
	if b, _ := json.Marshal(r.Value); string(b) != `{"path":"`+p+`","before":"","after":"","omitted":true}` {
		t.Errorf("edit value %s", b)
	}
	if got := e.content(t, "big.txt"); got != body+"the edited line\n"+body {
		t.Errorf("edited file of %d bytes", len(got))
	}
	r = e.call(s, "write", args{"file_path": "big.txt", "content": "small\n"})
	wantText(t, r, writeEnvelope(p, "Updated file"))
	if b, _ := json.Marshal(r.Value); string(b) != `{"path":"`+p+`","operation":"update","before":null,"after":"small\n","omitted":true}` {
		t.Errorf("write value %s", b)
	}
}

// two concurrent same-session edits at one observed version:
// exactly one succeeds, the other is stale.
func TestConcurrentEdits(t *testing.T) {
	e := setup(t, options{policy: true})
	s := newSession(e.dir)
	// Hold each edit, after the policy decided its guard, until both have
	// one: otherwise one edit may finish (and record its new version) before
	// the other asks, and the two would not be concurrent at all.
	var barrier atomic.Pointer[sync.WaitGroup]
	if _, err := fs.EditIntentEvent.On(e.root, func(_ fs.IntentRequest, next runtime.Next[*fs.EditIntent]) (*fs.EditIntent, error) {
		intent, err := next()
		b := barrier.Load()
		b.Done()
		b.Wait()
		return intent, err
	}, runtime.Prepend()); err != nil {
		t.Fatal(err)
	}
	for round := range 20 {
		e.write(t, "a.txt", "alpha beta")
		e.call(s, "read", args{"file_path": "a.txt"})
		b := new(sync.WaitGroup)
		b.Add(2)
		barrier.Store(b)
		var wg sync.WaitGroup
		results := make([]*registry.Result, 2)
		for i, edit := range []args{
			{"file_path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"},
			{"file_path": "a.txt", "old_string": "beta", "new_string": "BETA"},
		} {
			wg.Go(func() { results[i] = e.call(s, "edit", edit) })
		}
		wg.Wait()
		ok, stale := 0, 0
		for _, r := range results {
			switch {
			case !r.IsError:
				ok++
			case r.Error != nil && r.Error.Code == fs.CodeStaleVersion:
				stale++
			}
		}
		if ok != 1 || stale != 1 {
			t.Fatalf("round %d: %d ok, %d stale: %+v %+v", round, ok, stale, results[0], results[1])
		}
	}
}

// a failing fs/observed listener makes the result an error, but the
// mutation is already on disk.
func TestObserverFailure(t *testing.T) {
	e := setup(t, options{})
	if _, err := fs.ObservedEvent.On(e.root, func(fs.Observation) error { return errors.New("recorder broke") }); err != nil {
		t.Fatal(err)
	}
	r := e.call(nil, "write", args{"file_path": "a.txt", "content": "durable"})
	if !r.IsError || !strings.Contains(r.Text, "recorder broke") {
		t.Fatalf("got %+v", r)
	}
	if e.content(t, "a.txt") != "durable" {
		t.Fatal("write did not land")
	}
}

// reading through the provider directly observes nothing.
func TestDirectProviderReadIsNoObservation(t *testing.T) {
	e := setup(t, options{policy: true})
	e.write(t, "a.txt", "x")
	target, err := e.fsys.Resolve(context.Background(), "a.txt", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.fsys.ReadText(context.Background(), target); err != nil {
		t.Fatal(err)
	}
	s := newSession(e.dir)
	wantError(t, e.call(s, "edit", args{"file_path": "a.txt", "old_string": "x", "new_string": "y"}), `Error: edit requires reading "`+e.path("a.txt")+`" first`, fs.CodeNotObserved)
}

// schema violations come from the registry, before the tool runs; an
// explicit null is a type violation, not "absent".
func TestSchemaViolations(t *testing.T) {
	e := setup(t, options{})
	wantError(t, e.call(nil, "read", args{}), `Error: invalid arguments: missing required property "file_path"`, "INVALID_ARGS")
	wantError(t, e.call(nil, "read", args{"file_path": "a", "offset": nil}), `Error: invalid arguments: "offset" must be a number`, "INVALID_ARGS")
	wantError(t, e.call(nil, "edit", args{"file_path": "a", "old_string": "a", "new_string": "b", "replace_all": "yes"}), `Error: invalid arguments: "replace_all" must be a boolean`, "INVALID_ARGS")
}

// Keys match exactly: a case variant of file_path is an undeclared key the
// tools ignore, so a rule that reads file_path judges the file written. A
// declared key given twice is refused before the tool runs.
func TestArgumentKeysAreExact(t *testing.T) {
	e := setup(t, options{})
	r := e.tools.Execute(context.Background(), &registry.Call{ID: "1", Tool: "write",
		Args: json.RawMessage(`{"file_path":"ok.txt","FILE_PATH":"../escaped.txt","Content":"wrong","content":"right"}`)})
	wantText(t, r, "<path>"+e.path("ok.txt")+"</path>\n<type>file</type>\n<content>\nCreated file\n</content>")
	if got := e.content(t, "ok.txt"); got != "right" {
		t.Fatalf("ok.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(e.dir), "escaped.txt")); !os.IsNotExist(err) {
		t.Fatalf("the case variant was written: %v", err)
	}
	for _, tc := range []struct{ tool, args, text string }{
		{"write", `{"file_path":"a.txt","file_path":"../b.txt","content":"x"}`, `Error: invalid arguments: duplicate property "file_path"`},
		{"edit", `{"file_path":"ok.txt","old_string":"right","new_string":"x","old_string":"r"}`, `Error: invalid arguments: duplicate property "old_string"`},
		{"read", `{"File_Path":"ok.txt"}`, `Error: invalid arguments: missing required property "file_path"`},
		{"list", `{"path":".","path":".."}`, `Error: invalid arguments: duplicate property "path"`},
	} {
		r := e.tools.Execute(context.Background(), &registry.Call{ID: "2", Tool: tc.tool, Args: json.RawMessage(tc.args)})
		wantError(t, r, tc.text, registry.CodeInvalidArgs)
	}
	if _, err := os.Stat(e.path("a.txt")); !os.IsNotExist(err) {
		t.Fatalf("a refused write ran: %v", err)
	}
	if got := e.content(t, "ok.txt"); got != "right" {
		t.Fatalf("a refused edit ran: %q", got)
	}
}

// a call whose context is already done never reaches the tool.
func TestPreAbortedCall(t *testing.T) {
	e := setup(t, options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := e.tools.Execute(ctx, &registry.Call{ID: "1", Tool: "write", Args: json.RawMessage(`{"file_path":"a.txt","content":"x"}`)})
	wantError(t, r, "Error: tool call aborted before dispatch", "ABORTED_BEFORE_DISPATCH")
	if _, err := os.Stat(e.path("a.txt")); !os.IsNotExist(err) {
		t.Fatalf("the file exists: %v", err)
	}
}

// The provider rows as the model sees them through the tools, without the
// policy: exact text, code, and what is on disk afterwards.
func TestProviderRowsThroughTools(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		tool     string
		args     args
		want     string // exact text; an error text starts with "Error: "
		code     string
		disk     map[string]string
		wantMode os.FileMode
	}{
		{name: "R-029 ancestor is a file", files: map[string]string{"afile": "x"}, tool: "write",
			args: args{"file_path": "afile/child.txt", "content": "y"},
			want: `Error: cannot resolve "{dir}/afile/child.txt": a parent path segment is not a directory`, code: fs.CodeNotFound},
		{name: "R-081 write onto a directory", files: map[string]string{"d/x": ""}, tool: "write",
			args: args{"file_path": "d", "content": "y"}, want: `Error: cannot write "{dir}/d": not a regular file`, code: fs.CodeNotRegularFile},
		{name: "R-079 R-084 exact bytes, parents created, new file 0600", tool: "write",
			args: args{"file_path": "p/q/new.txt", "content": "a\r\nb"}, want: writeEnvelope("{dir}/p/q/new.txt", "Created file"),
			disk: map[string]string{"p/q/new.txt": "a\r\nb"}, wantMode: 0o600},
		{name: "R-093 literal replacement", files: map[string]string{"a.txt": "x y"}, tool: "edit",
			args: args{"file_path": "a.txt", "old_string": "x", "new_string": "$&$1"}, want: "The file {dir}/a.txt has been updated successfully.",
			disk: map[string]string{"a.txt": "$&$1 y"}},
		{name: "R-094 no match", files: map[string]string{"a.txt": "abc"}, tool: "edit",
			args: args{"file_path": "a.txt", "old_string": "zz", "new_string": "y"}, want: `Error: old_string was not found in "{dir}/a.txt"`, code: fs.CodeEditNotFound},
		{name: "R-095 ambiguous", files: map[string]string{"a.txt": "a a a"}, tool: "edit",
			args: args{"file_path": "a.txt", "old_string": "a", "new_string": "b"},
			want: `Error: old_string matched 3 times in "{dir}/a.txt"; provide a more specific old_string or set replace_all to true`, code: fs.CodeAmbiguousEdit,
			disk: map[string]string{"a.txt": "a a a"}},
		{name: "R-096 non-overlapping count", files: map[string]string{"a.txt": "aaa"}, tool: "edit",
			args: args{"file_path": "a.txt", "old_string": "aa", "new_string": "X"}, want: "The file {dir}/a.txt has been updated successfully.",
			disk: map[string]string{"a.txt": "Xa"}},
		{name: "R-097 R-092 replace_all", files: map[string]string{"a.txt": "a a a"}, tool: "edit",
			args: args{"file_path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": true},
			want: "The file {dir}/a.txt has been updated. All occurrences were successfully replaced.", disk: map[string]string{"a.txt": "b b b"}},
		{name: "R-092 wording follows the flag", files: map[string]string{"a.txt": "a b"}, tool: "edit",
			args: args{"file_path": "a.txt", "old_string": "a", "new_string": "c", "replace_all": true},
			want: "The file {dir}/a.txt has been updated. All occurrences were successfully replaced.", disk: map[string]string{"a.txt": "c b"}},
		{name: "R-098 empty new_string deletes", files: map[string]string{"a.txt": "keep-drop"}, tool: "edit",
			args: args{"file_path": "a.txt", "old_string": "-drop", "new_string": ""}, want: "The file {dir}/a.txt has been updated successfully.",
			disk: map[string]string{"a.txt": "keep"}},
		{name: "R-099 CRLF file keeps CRLF", files: map[string]string{"a.txt": "a\r\nOLD\r\nb\r\n"}, tool: "edit",
			args: args{"file_path": "a.txt", "old_string": "OLD", "new_string": "NEW"}, want: "The file {dir}/a.txt has been updated successfully.",
			disk: map[string]string{"a.txt": "a\r\nNEW\r\nb\r\n"}},
		{name: "R-100 BOM kept on edit (port decision)", files: map[string]string{"a.txt": "\ufeffold"}, tool: "edit",
			args: args{"file_path": "a.txt", "old_string": "old", "new_string": "new"}, want: "The file {dir}/a.txt has been updated successfully.",
			disk: map[string]string{"a.txt": "\ufeffnew"}},
		{name: "R-103 edit a directory", files: map[string]string{"d/x": ""}, tool: "edit",
			args: args{"file_path": "d", "old_string": "a", "new_string": "b"}, want: `Error: cannot edit "{dir}/d": not a regular file`, code: fs.CodeNotRegularFile},
		{name: "R-104 NUL anywhere", files: map[string]string{"a.txt": strings.Repeat("a", 9000) + "\x00"}, tool: "edit",
			args: args{"file_path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": true}, want: `Error: cannot edit "{dir}/a.txt": binary file`, code: fs.CodeNotText},
		{name: "R-104 invalid UTF-8", files: map[string]string{"a.txt": "a\xff"}, tool: "edit",
			args: args{"file_path": "a.txt", "old_string": "a", "new_string": "b"}, want: `Error: cannot edit "{dir}/a.txt": invalid UTF-8 text`, code: fs.CodeNotText,
			disk: map[string]string{"a.txt": "a\xff"}},
		{name: "R-071 late NUL reads as text", files: map[string]string{"a.txt": strings.Repeat("a", 8192) + "\x00"}, tool: "read",
			args: args{"file_path": "a.txt", "offset": 1, "limit": 1}, want: "<path>{dir}/a.txt</path>\n<type>file</type>\n<content>\n1: " + strings.Repeat("a", 2000) + "... (line truncated to 2000 chars)\n\n(End of file - total 1 lines)\n</content>"},
		{name: "R-078 update reports the old text", files: map[string]string{"a.txt": "a\r\nb"}, tool: "write",
			args: args{"file_path": "a.txt", "content": "c"}, want: writeEnvelope("{dir}/a.txt", "Updated file"), disk: map[string]string{"a.txt": "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t, options{})
			for name, content := range tt.files {
				e.write(t, name, content)
			}
			r := e.call(newSession(e.dir), tt.tool, tt.args)
			want := strings.ReplaceAll(tt.want, "{dir}", e.dir)
			if tt.code != "" || strings.HasPrefix(want, "Error: ") {
				wantError(t, r, want, tt.code)
			} else {
				wantText(t, r, want)
			}
			for name, content := range tt.disk {
				if got := e.content(t, name); got != content {
					t.Errorf("%s holds %q, want %q", name, got, content)
				}
			}
			if tt.wantMode != 0 {
				for name := range tt.disk {
					if st, err := os.Stat(e.path(name)); err != nil || st.Mode().Perm() != tt.wantMode {
						t.Errorf("%s mode %v (%v), want %v", name, st.Mode().Perm(), err, tt.wantMode)
					}
				}
			}
		})
	}
}

// a read cancelled during its body fails with the provider's
// "read aborted" and observes nothing.
func TestReadCancelledDuringBody(t *testing.T) {
	e := setup(t, options{policy: true, config: toolfs.Config{ReadStreamMinSize: 1}})
	e.write(t, "a.txt", strings.Repeat("line\n", 100000))
	ctx, cancel := context.WithCancel(context.Background())
	e.fsys.onStream = cancel
	s := newSession(e.dir)
	r := e.tools.Execute(ctx, &registry.Call{ID: "1", Tool: "read", Args: json.RawMessage(`{"file_path":"a.txt"}`), Session: s})
	wantError(t, r, "Error: read aborted", fs.CodeAborted)
	e.fsys.onStream = nil
	wantError(t, e.call(s, "edit", args{"file_path": "a.txt", "old_string": "line", "new_string": "x", "replace_all": true}),
		`Error: edit requires reading "`+e.path("a.txt")+`" first`, fs.CodeNotObserved)
}

// the tools wait for the fs service, appear when the provider plugin
// is applied, and go (schemas and prompt sections) when it is disposed.
func TestFollowsTheProvider(t *testing.T) {
	dir := t.TempDir()
	root := runtimetest.New(t)
	runtimetest.Plug(t, root, registry.Plugin, nil)
	tools, _ := registry.Tools.Lookup(root)
	prompt, _ := registry.Prompts.Lookup(root)
	f, err := root.Plugin(toolfs.Plugin, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.State() != runtime.Pending || len(tools.Definitions()) != 0 {
		t.Fatalf("without fs: %s with %d tools", f.State(), len(tools.Definitions()))
	}
	provider := runtimetest.Plug(t, root, fslocal.Plugin, fslocal.Config{Cwd: dir})
	if err := f.Wait(); err != nil || f.State() != runtime.Active || len(tools.Definitions()) != 4 {
		t.Fatalf("with fs: %s (%v) with %d tools", f.State(), err, len(tools.Definitions()))
	}
	r := tools.Execute(context.Background(), &registry.Call{ID: "1", Tool: "write", Args: json.RawMessage(`{"file_path":"a.txt","content":"x"}`)})
	if r.IsError || !strings.HasSuffix(r.Text, "Created file\n</content>") {
		t.Fatalf("write through fslocal.Plugin: %q", r.Text)
	}
	if err := provider.Dispose(); err != nil {
		t.Fatal(err)
	}
	if n := len(tools.Definitions()); n != 0 || strings.Contains(prompt.Assemble(), "read tool") {
		t.Fatalf("after the provider left: %d tools, prompt %q", n, prompt.Assemble())
	}
	// Until a provider comes back, a call says so, and how to go on.
	r = tools.Execute(context.Background(), &registry.Call{ID: "2", Tool: "read", Args: json.RawMessage(`{"file_path":"a.txt"}`)})
	wantError(t, r, "Error: the read tool is unavailable while its plugin stops or restarts; retry the call", registry.CodeUnavailable)
	runtimetest.Plug(t, root, fslocal.Plugin, fslocal.Config{Cwd: dir})
	if err := f.Wait(); err != nil {
		t.Fatal(err)
	}
	r = tools.Execute(context.Background(), &registry.Call{ID: "3", Tool: "read", Args: json.RawMessage(`{"file_path":"a.txt"}`)})
	if r.IsError {
		t.Fatalf("read after the provider came back: %q", r.Text)
	}
}

// An 80 KB path is quoted clipped (fs.Clip): its first 1024 bytes and how
// many were left out, not 80 KB of error text; a 100,000-digit number too.
func TestLongPathClipped(t *testing.T) {
	e := setup(t, options{})
	huge := strings.Repeat("n", 80*1024)
	d := e.path(huge)
	want := `Error: cannot resolve "` + d[:1024] + "…(" + strconv.Itoa(len(d)-1024) + ` bytes more)": file name too long`
	r := e.call(nil, "read", args{"file_path": huge})
	wantError(t, r, want, fs.CodeIO)
	if len(r.Text) >= 2048 {
		t.Fatalf("error text is %d bytes", len(r.Text))
	}
	// So is a 100,000-digit limit in the invalid arguments text.
	shown := "number 1" + strings.Repeat("0", 99999)
	r = e.call(nil, "read", args{"file_path": "a.txt", "limit": json.Number(shown[len("number "):])})
	wantError(t, r, `Error: invalid arguments: "limit": cannot use `+shown[:1024]+"…(98983 bytes more) as float64", registry.CodeInvalidArgs)
}
