package toolsearch_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/toolsearch"
)

// Section C: search roots, display paths, confinement.
func TestRoots(t *testing.T) {
	both(t, func(t *testing.T, p provider) {
		e := setup(t, options{provider: p})
		e.write(t, map[string]string{
			"a.txt":       "needle a\n",
			"src/b.ts":    "needle b\n",
			".h.txt":      "needle hidden\n",
			".gitignore":  "ign.txt\n",
			"ign.txt":     "needle ignored\n",
			"bin.dat":     "needle\x00bin\n",
			"sub/deep.md": "needle deep\n",
		})
		e.mkdir(t, ".git")
		e.symlink(t, "src", "linkdir")
		e.symlink(t, "a.txt", "l.txt")
		e.symlink(t, "/etc", "out")
		e.symlink(t, "/etc/hostname", "esc.txt")
		ws := e.ws
		outside := func(p string) string {
			return `Error: cannot resolve "` + p + `": outside the workspace "` + ws + `"`
		}
		all := lines(".gitignore", ".h.txt", "a.txt", "bin.dat", "ign.txt", "src/b.ts", "sub/deep.md")
		check(t, e, p, []row{
			{name: "S-019 no path is the workspace", tool: "glob", args: args{"pattern": "*"}, want: all},
			{name: "S-020 parent", tool: "glob", args: args{"pattern": "*", "path": ".."}, want: outside(filepath.Dir(ws)), code: fs.CodeSandboxDenied},
			{name: "S-020 slash", tool: "grep", args: args{"pattern": "x", "path": "/"}, want: outside("/"), code: fs.CodeSandboxDenied},
			{name: "S-020 absolute outside", tool: "glob", args: args{"pattern": "*", "path": "/etc"}, want: outside("/etc"), code: fs.CodeSandboxDenied},
			{name: "S-020 symlinked directory out", tool: "glob", args: args{"pattern": "*", "path": "out"}, want: outside(ws + "/out"), code: fs.CodeSandboxDenied},
			{name: "S-020 symlinked file out", tool: "grep", args: args{"pattern": "x", "path": "esc.txt"}, want: outside(ws + "/esc.txt"), code: fs.CodeSandboxDenied},
			{name: "S-021 dot", tool: "glob", args: args{"pattern": "*.ts", "path": "."}, want: "./src/b.ts"},
			{name: "S-021 dot-slash dir", tool: "glob", args: args{"pattern": "*", "path": "./src"}, want: "./src/b.ts"},
			{name: "S-021 trailing slash", tool: "glob", args: args{"pattern": "*", "path": "src/"}, want: "src/b.ts"},
			{name: "S-021 absolute dir", tool: "glob", args: args{"pattern": "*", "path": ws + "/src"}, want: "src/b.ts"},
			{name: "S-021 absolute with dot-dot", tool: "glob", args: args{"pattern": "*", "path": ws + "/src/../src"}, want: "src/b.ts"},
			{name: "S-021 absolute file", tool: "glob", args: args{"pattern": "*", "path": ws + "/a.txt"}, want: "a.txt"},
			{name: "S-021 relative is never normalised", tool: "glob", args: args{"pattern": "*", "path": "src/../src"}, want: "src/../src/b.ts"},
			{name: "S-021 absolute workspace", tool: "glob", args: args{"pattern": "*.ts", "path": ws}, want: "src/b.ts"},
			{name: "S-021 grep no path", tool: "grep", args: args{"pattern": "needle [ab]"}, want: "Found 2 matches\n\na.txt\nLine 1: needle a\n\nsrc/b.ts\nLine 1: needle b"},
			{name: "S-021 grep dot", tool: "grep", args: args{"pattern": "needle b", "path": "."}, want: "Found 1 match\n\n./src/b.ts\nLine 1: needle b"},
			{name: "S-021 grep dot-slash", tool: "grep", args: args{"pattern": "needle", "path": "./src"}, want: "Found 1 match\n\n./src/b.ts\nLine 1: needle b"},
			{name: "S-021 grep trailing slash", tool: "grep", args: args{"pattern": "needle", "path": "src/"}, want: "Found 1 match\n\nsrc/b.ts\nLine 1: needle b"},
			{name: "S-021 grep absolute", tool: "grep", args: args{"pattern": "needle", "path": ws + "/src/../src"}, want: "Found 1 match\n\nsrc/b.ts\nLine 1: needle b"},
			{name: "S-021 grep absolute file", tool: "grep", args: args{"pattern": "needle", "path": ws + "/a.txt"}, want: "Found 1 match\n\na.txt\nLine 1: needle a"},
			{name: "S-021 grep relative with dot-dot", tool: "grep", args: args{"pattern": "needle", "path": "src/../src"}, want: "Found 1 match\n\nsrc/../src/b.ts\nLine 1: needle b"},
			{name: "S-023 glob file root whatever the pattern", tool: "glob", args: args{"pattern": "*.md", "path": "a.txt"}, want: "a.txt"},
			{name: "S-023 glob symlinked directory root", tool: "glob", args: args{"pattern": "*", "path": "linkdir"}, want: "linkdir/b.ts"},
			{name: "S-023 glob symlinked file root", tool: "glob", args: args{"pattern": "*.md", "path": "l.txt"}, want: "l.txt"},
			{name: "S-023 grep symlinked directory root", tool: "grep", args: args{"pattern": "needle", "path": "linkdir"}, want: "Found 1 match\n\nlinkdir/b.ts\nLine 1: needle b"},
			{name: "S-023 grep symlinked file root", tool: "grep", args: args{"pattern": "needle", "path": "l.txt"}, want: "Found 1 match\n\nl.txt\nLine 1: needle a"},
			{name: "S-023 grep hidden file root", tool: "grep", args: args{"pattern": "needle", "path": ".h.txt"}, want: "Found 1 match\n\n.h.txt\nLine 1: needle hidden"},
			{name: "S-023 grep ignored file root", tool: "grep", args: args{"pattern": "needle", "path": "ign.txt"}, want: "Found 1 match\n\nign.txt\nLine 1: needle ignored"},
			{name: "S-023 grep binary file root", tool: "grep", args: args{"pattern": "bin", "path": "bin.dat"}, want: "Found 1 match\n\nbin.dat\nLine 1: needle\x00bin",
				skipGeneric: "StreamText refuses a binary file, so the root cannot be searched whole"},
			{name: "S-023 include never filters a file root", tool: "grep", args: args{"pattern": "needle", "path": "a.txt", "include": "*.zzz"}, want: "Found 1 match\n\na.txt\nLine 1: needle a"},
			{name: "S-024 glob missing root", tool: "glob", args: args{"pattern": "*", "path": "nope"},
				want: "Error: glob search failed (exit 2): rg: nope: IO error for operation on nope: No such file or directory (os error 2)", code: toolsearch.CodeFailed},
			{name: "S-024 grep missing root", tool: "grep", args: args{"pattern": "x", "path": "nope"},
				want: "Error: grep search failed (exit 2): rg: nope: IO error for operation on nope: No such file or directory (os error 2)", code: toolsearch.CodeFailed},
			{name: "S-024 grep parent is a file", tool: "grep", args: args{"pattern": "x", "path": "a.txt/x"},
				want: "Error: grep search failed (exit 2): rg: a.txt/x: IO error for operation on a.txt/x: Not a directory (os error 20)", code: toolsearch.CodeFailed},
			{name: "S-024 glob parent is a file", tool: "glob", args: args{"pattern": "*", "path": "a.txt/x"},
				want: "Error: glob search failed (exit 2): rg: a.txt/x: IO error for operation on a.txt/x: Not a directory (os error 20)", code: toolsearch.CodeFailed},
		})
		// S-022: the value's root.
		for _, c := range []struct {
			path any
			want string
		}{{nil, "."}, {"src", "src"}, {"./src", "./src"}, {"src/", "src/"}, {ws, "."}, {ws + "/src", "src"}, {"a.txt", "a.txt"}} {
			a := args{"pattern": "*"}
			if c.path != nil {
				a["path"] = c.path
			}
			r := e.call("glob", a)
			if v := value[toolsearch.GlobResult](t, r); r.IsError || v.Root != c.want {
				t.Errorf("S-022 path %v: root %q, want %q (%s)", c.path, v.Root, c.want, r.Text)
			}
		}
	})
}

// S-024: a root the system cannot reach for another reason than a missing
// name fails as rg fails to open it, with the OS's words, not as a
// provider error. (A loop sits in a workspace of its own: the generic walk
// cannot list a directory holding one, since ListDir fails as a whole.)
func TestUnreachableRoot(t *testing.T) {
	both(t, func(t *testing.T, p provider) {
		e := setup(t, options{provider: p})
		e.symlink(t, "loop2", "loop1")
		e.symlink(t, "loop1", "loop2")
		loop := fmt.Sprintf("Too many levels of symbolic links (os error %d)", int(syscall.ELOOP))
		long := strings.Repeat("n", 300)
		// An 80 KB name is quoted clipped (fs.Clip), both times.
		huge := strings.Repeat("n", 80*1024)
		clipped := huge[:1024] + "…(80896 bytes more)"
		check(t, e, p, []row{
			{name: "glob symlink loop", tool: "glob", args: args{"pattern": "*", "path": "loop1"},
				want: "Error: glob search failed (exit 2): rg: loop1: IO error for operation on loop1: " + loop, code: toolsearch.CodeFailed},
			{name: "grep symlink loop", tool: "grep", args: args{"pattern": "x", "path": "loop1"},
				want: "Error: grep search failed (exit 2): rg: loop1: IO error for operation on loop1: " + loop, code: toolsearch.CodeFailed},
			{name: "grep name too long", tool: "grep", args: args{"pattern": "x", "path": long},
				want: "Error: grep search failed (exit 2): rg: " + long + ": IO error for operation on " + long + ": " +
					fmt.Sprintf("File name too long (os error %d)", int(syscall.ENAMETOOLONG)), code: toolsearch.CodeFailed},
			{name: "grep 80 KB name", tool: "grep", args: args{"pattern": "x", "path": huge},
				want: "Error: grep search failed (exit 2): rg: " + clipped + ": IO error for operation on " + clipped + ": " +
					fmt.Sprintf("File name too long (os error %d)", int(syscall.ENAMETOOLONG)), code: toolsearch.CodeFailed},
		})
	})
}

// S-019: a relative path resolves against the session's cwd, and without
// a path the search covers it.
func TestSessionCwd(t *testing.T) {
	both(t, func(t *testing.T, p provider) {
		e := setup(t, options{provider: p})
		e.write(t, map[string]string{"a.txt": "needle\n", "src/b.ts": "needle\n", "src/x/c.ts": "needle\n"})
		e.s = session{cwd: e.path("src")}
		check(t, e, p, []row{
			{name: "glob without path", tool: "glob", args: args{"pattern": "*"}, want: lines("b.ts", "x/c.ts")},
			{name: "glob relative path", tool: "glob", args: args{"pattern": "*", "path": "x"}, want: "x/c.ts"},
			{name: "glob anchored at the session cwd", tool: "glob", args: args{"pattern": "x/*.ts"}, want: "x/c.ts"},
			{name: "grep without path", tool: "grep", args: args{"pattern": "needle"}, want: "Found 2 matches\n\nb.ts\nLine 1: needle\n\nx/c.ts\nLine 1: needle"},
			{name: "grep absolute in the workspace", tool: "grep", args: args{"pattern": "needle", "path": e.path("a.txt")}, want: "Found 1 match\n\n" + e.path("a.txt") + "\nLine 1: needle"},
		})
	})
}
