package toolsearch_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/toolsearch"
)

// Section D, S-025/S-026/S-029/S-032: what glob visits and how the
// pattern reads.
func TestGlobSelection(t *testing.T) {
	both(t, func(t *testing.T, p provider) {
		e := setup(t, options{provider: p})
		e.write(t, map[string]string{
			"a.txt":              "",
			"b.md":               "",
			"B.TS":               "",
			"#x":                 "",
			"lib/x.ts":           "",
			"src/a.ts":           "",
			"src/deep/y.ts":      "",
			"src/z.md":           "",
			".hidden":            "",
			".gitignore":         "*.txt\n",
			".ignore":            "*.md\n",
			".github/ci.yml":     "",
			".gitmodules":        "",
			".git/HEAD":          "",
			".git/objects/ab":    "",
			"sub/.git":           "gitdir: ../.git/modules/sub\n",
			"sub/.hg/store/data": "",
			"sub/.svn/entries":   "",
			"sub/x.bzr":          "",
			"sub/.jj/repo":       "",
			"sub/.sl/store":      "",
			"sub/.bzr":           "",
			"sub/m.ts":           "",
			"dir.ts/inner.txt":   "",
			"sp ace.txt ":        "",
		})
		e.symlink(t, "a.txt", "link.txt")
		e.symlink(t, "src", "linkdir")
		e.symlink(t, "nowhere", "dangling.txt")
		mkfifo(t, e.path("fifo.txt"))
		check(t, e, p, []row{
			{name: "S-025 regular files only, hidden and ignored included, VCS excluded", tool: "glob", args: args{"pattern": "*"},
				want: lines("#x", ".github/ci.yml", ".gitignore", ".gitmodules", ".hidden", ".ignore", "B.TS", "a.txt", "b.md", "dir.ts/inner.txt",
					"lib/x.ts", "sp ace.txt ", "src/a.ts", "src/deep/y.ts", "src/z.md", "sub/m.ts", "sub/x.bzr")},
			{name: "S-025 the VCS directory as root", tool: "glob", args: args{"pattern": "*", "path": ".git"}, want: "No files found"},
			{name: "S-025 a root inside a VCS directory", tool: "glob", args: args{"pattern": "*", "path": "sub/.hg/store"}, want: "No files found"},
			{name: "S-025 ignore files do not apply", tool: "glob", args: args{"pattern": "*.txt"}, want: lines("a.txt", "dir.ts/inner.txt")},
			{name: "S-026 alternation", tool: "glob", args: args{"pattern": "*.{ts,md}"}, want: lines("b.md", "lib/x.ts", "src/a.ts", "src/deep/y.ts", "src/z.md", "sub/m.ts")},
			{name: "S-026 class", tool: "glob", args: args{"pattern": "[ab].*"}, want: lines("a.txt", "b.md", "src/a.ts")},
			{name: "S-026 negated class", tool: "glob", args: args{"pattern": "[!ab].ts"}, want: lines("lib/x.ts", "src/deep/y.ts", "sub/m.ts")},
			{name: "S-026 caret class", tool: "glob", args: args{"pattern": "[^ab].ts"}, want: lines("lib/x.ts", "src/deep/y.ts", "sub/m.ts")},
			{name: "S-026 case-sensitive", tool: "glob", args: args{"pattern": "*.TS"}, want: "B.TS"},
			{name: "S-026 negation lists the rest", tool: "glob", args: args{"pattern": "!*.ts"},
				want: lines("#x", ".github/ci.yml", ".gitignore", ".gitmodules", ".hidden", ".ignore", "B.TS", "a.txt", "b.md", "sp ace.txt ", "src/z.md", "sub/x.bzr")},
			{name: "S-026 comment lists everything", tool: "glob", args: args{"pattern": "#x"},
				want: lines("#x", ".github/ci.yml", ".gitignore", ".gitmodules", ".hidden", ".ignore", "B.TS", "a.txt", "b.md", "dir.ts/inner.txt",
					"lib/x.ts", "sp ace.txt ", "src/a.ts", "src/deep/y.ts", "src/z.md", "sub/m.ts", "sub/x.bzr")},
			{name: "S-026 escaped hash", tool: "glob", args: args{"pattern": `\#x`}, want: "#x"},
			{name: "S-026 trailing space dropped", tool: "glob", args: args{"pattern": "*.txt "}, want: lines("a.txt", "dir.ts/inner.txt")},
			{name: "S-026 escaped trailing space", tool: "glob", args: args{"pattern": `*.txt\ `}, want: "sp ace.txt "},
			{name: "S-026 slash anchors at the workspace", tool: "glob", args: args{"pattern": "src/*.ts"}, want: "src/a.ts"},
			{name: "S-026 anchored at the workspace, not the root", tool: "glob", args: args{"pattern": "src/*.ts", "path": "src"}, want: "src/a.ts"},
			{name: "S-026 a root-relative pattern finds nothing", tool: "glob", args: args{"pattern": "lib/*.ts", "path": "src"}, want: "No files found"},
			{name: "S-026 leading slash anchors", tool: "glob", args: args{"pattern": "/a.txt"}, want: "a.txt"},
			{name: "S-026 star never crosses a slash", tool: "glob", args: args{"pattern": "src/*"}, want: lines("src/a.ts", "src/z.md")},
			{name: "S-026 double star spans segments", tool: "glob", args: args{"pattern": "src/**/*.ts"}, want: lines("src/a.ts", "src/deep/y.ts")},
			{name: "S-026 a/** is below a", tool: "glob", args: args{"pattern": "src/**"}, want: lines("src/a.ts", "src/deep/y.ts", "src/z.md")},
			{name: "S-026 trailing slash matches directories only", tool: "glob", args: args{"pattern": "src/"}, want: "No files found"},
			{name: "S-026 a directory name alone", tool: "glob", args: args{"pattern": "src"}, want: "No files found"},
			{name: "S-026 a matched directory does not list its files", tool: "glob", args: args{"pattern": "*.ts", "path": "dir.ts"}, want: "No files found"},
			{name: "S-026 question mark", tool: "glob", args: args{"pattern": "?.md"}, want: lines("b.md", "src/z.md")},
			{name: "S-029 empty", tool: "glob", args: args{"pattern": "*.zzz"}, want: "No files found"},
			{name: "S-032 unclosed class", tool: "glob", args: args{"pattern": "["},
				want: "Error: glob pattern rejected by ripgrep: rg: error parsing glob '[': unclosed character class; missing ']'", code: toolsearch.CodeInvalidPattern},
			{name: "S-032 unclosed alternation", tool: "glob", args: args{"pattern": "*.{ts"},
				want: "Error: glob pattern rejected by ripgrep: rg: error parsing glob '*.{ts': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)", code: toolsearch.CodeInvalidPattern},
			{name: "S-032 checked before the root", tool: "glob", args: args{"pattern": "[", "path": "nope"},
				want: "Error: glob pattern rejected by ripgrep: rg: error parsing glob '[': unclosed character class; missing ']'", code: toolsearch.CodeInvalidPattern},
			{name: "S-032 an 80 KB glob is quoted clipped", tool: "glob", args: args{"pattern": "*.{" + strings.Repeat("a", 80*1024-3)},
				want: "Error: glob pattern rejected by ripgrep: rg: error parsing glob '*.{" + strings.Repeat("a", 1021) +
					"…(80896 bytes more)': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)", code: toolsearch.CodeInvalidPattern},
		})
		// S-029: the empty value.
		r := e.call("glob", args{"pattern": "*.zzz"})
		if v := value[toolsearch.GlobResult](t, r); v.Root != "." || v.Paths == nil || len(v.Paths) != 0 {
			t.Errorf("S-029 value %+v", v)
		}
	})
}

// S-029: an empty workspace.
func TestGlobEmptyWorkspace(t *testing.T) {
	both(t, func(t *testing.T, p provider) {
		e := setup(t, options{provider: p})
		check(t, e, p, []row{{name: "empty", tool: "glob", args: args{"pattern": "*"}, want: "No files found"}})
	})
}

// S-027/S-028: oldest first across the whole tree, ties in walk order, a
// result that fits shown whole.
func TestGlobOrder(t *testing.T) {
	both(t, func(t *testing.T, p provider) {
		e := setup(t, options{provider: p})
		e.write(t, map[string]string{"a.txt": "", "src/b.ts": "", "src/c.ts": "", "docs/d.md": ""})
		for name, sec := range map[string]int64{"src/b.ts": 1000, "src/c.ts": 2000, "a.txt": 3000, "docs/d.md": 4000} {
			e.touch(t, name, time.Unix(sec, 0))
		}
		ties := setup(t, options{provider: p})
		ties.write(t, map[string]string{"B.txt": "", "a.txt": "", "b.txt": "", "c.txt": "", "d/x.txt": "", "d.txt": ""})
		ns := setup(t, options{provider: p})
		ns.write(t, map[string]string{"a": "", "b": "", "c": ""})
		ns.touch(t, "a", time.Unix(5, 3))
		ns.touch(t, "b", time.Unix(5, 1))
		ns.touch(t, "c", time.Unix(5, 2))
		check(t, e, p, []row{{name: "S-027 global mtime order", tool: "glob", args: args{"pattern": "*"}, want: lines("src/b.ts", "src/c.ts", "a.txt", "docs/d.md")}})
		check(t, ties, p, []row{{name: "S-027 ties in walk order", tool: "glob", args: args{"pattern": "*"}, want: lines("B.txt", "a.txt", "b.txt", "c.txt", "d/x.txt", "d.txt")}})
		check(t, ns, p, []row{{name: "S-027 nanoseconds", tool: "glob", args: args{"pattern": "*"}, want: lines("b", "c", "a")}})
		// A file written later is newer than the setup's files.
		e.write(t, map[string]string{"new.txt": ""})
		e.touch(t, "new.txt", time.Now())
		check(t, e, p, []row{{name: "S-027 a new file is last", tool: "glob", args: args{"pattern": "*"}, want: lines("src/b.ts", "src/c.ts", "a.txt", "docs/d.md", "new.txt")}})
		r := e.call("glob", args{"pattern": "*"})
		if v := value[toolsearch.GlobResult](t, r); v.Root != "." || strings.Join(v.Paths, "\n") != r.Text {
			t.Errorf("S-028 value %+v", v)
		}
	})
}

// writeSeries writes names oldest first, one second apart from start.
func writeSeries(t *testing.T, e *env, start time.Time, names []string) time.Time {
	t.Helper()
	for _, n := range names {
		e.write(t, map[string]string{n: ""})
		e.touch(t, n, start)
		start = start.Add(time.Second)
	}
	return start
}

func numbered(format string, from, to int) []string {
	var names []string
	for i := from; i <= to; i++ {
		names = append(names, fmt.Sprintf(format, i))
	}
	return names
}

// S-028, S-030, S-031, S-054: the over-cap page, sampled across top-level
// entries, with its exact footer and a value that keeps every path.
func TestGlobSampling(t *testing.T) {
	const unsaved = " The complete result could not be saved; narrow pattern or path to see more.)"
	both(t, func(t *testing.T, p provider) {
		t.Run("S-028 exactly 100 fits", func(t *testing.T) {
			e := setup(t, options{provider: p})
			names := numbered("f%03d", 1, 100)
			writeSeries(t, e, base, names)
			want(t, e.call("glob", args{"pattern": "*"}), lines(names...), "")
		})
		t.Run("S-031 120 flat paths: the head", func(t *testing.T) {
			e := setup(t, options{provider: p})
			names := numbered("f%03d", 1, 120)
			writeSeries(t, e, base, names)
			r := e.call("glob", args{"pattern": "*"})
			want(t, r, lines(names[:100]...)+"\n\n(Showing 100 of 120 paths."+unsaved, "")
			if v := value[toolsearch.GlobResult](t, r); !slices.Equal(v.Paths, names) {
				t.Errorf("S-054 value holds %d paths", len(v.Paths))
			}
		})
		t.Run("S-030 151 paths in 4 entries", func(t *testing.T) {
			e := setup(t, options{provider: p})
			vendor, src, docs := numbered("vendor/v%03d", 1, 120), numbered("src/s%02d", 1, 20), numbered("docs/d%02d", 1, 10)
			at := writeSeries(t, e, base, vendor)
			at = writeSeries(t, e, at, src)
			at = writeSeries(t, e, at, docs)
			writeSeries(t, e, at, []string{"README.md"})
			page := slices.Concat(vendor[:69], src, docs, []string{"README.md"})
			r := e.call("glob", args{"pattern": "*"})
			want(t, r, lines(page...)+"\n\n(Showing 100 of 151 paths, sampled across 4 of the 4 top-level entries this pattern matched instead of taken in modification-time order."+unsaved, "")
			if v := value[toolsearch.GlobResult](t, r); len(v.Paths) != 151 || v.Paths[150] != "README.md" {
				t.Errorf("S-054 value holds %d paths", len(v.Paths))
			}
			// S-030: relative to an explicit root, and to an absolute one.
			sub := setup(t, options{provider: p})
			writeSeries(t, sub, base, numbered("r/a/%03d", 1, 60))
			writeSeries(t, sub, base.Add(time.Hour), numbered("r/b/%03d", 1, 60))
			for _, root := range []string{"r", "./r", "r/", sub.ws + "/r"} {
				r := sub.call("glob", args{"pattern": "*", "path": root})
				if !strings.HasSuffix(r.Text, "sampled across 2 of the 2 top-level entries this pattern matched instead of taken in modification-time order."+unsaved) ||
					strings.Count(r.Text, "/a/") != 50 || strings.Count(r.Text, "/b/") != 50 {
					t.Errorf("root %q: %q", root, r.Text)
				}
			}
		})
		t.Run("S-031 106 paths in 105 entries", func(t *testing.T) {
			e := setup(t, options{provider: p})
			at := writeSeries(t, e, base, []string{"dir/one", "dir/two"})
			flat := numbered("f%03d", 1, 104)
			writeSeries(t, e, at, flat)
			page := slices.Concat([]string{"dir/one"}, flat[:99])
			want(t, e.call("glob", args{"pattern": "*"}), lines(page...)+"\n\n(Showing 100 of 106 paths, sampled across 100 of the 105 top-level entries this pattern matched instead of taken in modification-time order. Narrow path to inspect a specific subtree."+unsaved, "")
		})
		t.Run("S-031 a configured cap", func(t *testing.T) {
			e := setup(t, options{provider: p, config: toolsearch.Config{GlobMaxResults: 2}})
			writeSeries(t, e, base, []string{"x/1", "x/2", "x/3", "y"})
			want(t, e.call("glob", args{"pattern": "*"}), "x/1\ny\n\n(Showing 2 of 4 paths, sampled across 2 of the 2 top-level entries this pattern matched instead of taken in modification-time order."+unsaved, "")
		})
	})
}
