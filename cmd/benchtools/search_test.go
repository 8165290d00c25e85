package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The floors are upstream's command lines (spec/search.md, "The two
// commands") with rg's thread count, rg -n for grep, and the same piped
// into Node; without rg there is none, without node no Node floor.
func TestSearchFloors(t *testing.T) {
	env := searchEnv{rg: "/bin/rg", node: "/bin/node", jobs: 3}
	excludes := []string{"--glob=!**/.git", "--glob=!**/.git/**", "--glob=!**/.svn", "--glob=!**/.svn/**", "--glob=!**/.hg", "--glob=!**/.hg/**",
		"--glob=!**/.bzr", "--glob=!**/.bzr/**", "--glob=!**/.jj", "--glob=!**/.jj/**", "--glob=!**/.sl", "--glob=!**/.sl/**"}
	glob := search{"glob", map[string]any{"pattern": "**/*_test.go"}}
	globArgs := slices.Concat([]string{"--files", "--glob=**/*_test.go", "--sort=modified", "--no-ignore", "--hidden"}, excludes, []string{"--threads=3"})
	grep := search{"grep", map[string]any{"pattern": `a\(`, "include": "*.go"}}
	grepArgs := []string{"--regexp=a\\(", "--glob=*.go", "--threads=3"}
	pipe := []string{"sh", "-c", `node=$1 script=$2; shift 2; "$@" | "$node" -e "$script"`, "sh", "/bin/node"}
	for _, tc := range []struct {
		env  searchEnv
		s    search
		want []floor
	}{
		{env, glob, []floor{
			{"rg --files", slices.Concat([]string{"/bin/rg"}, globArgs)},
			{"rg --files | node", slices.Concat(pipe, []string{nodeParse(false), "/bin/rg"}, globArgs)},
		}},
		{env, grep, []floor{
			{"rg --json", slices.Concat([]string{"/bin/rg", "--json"}, grepArgs)},
			{"rg -n", slices.Concat([]string{"/bin/rg", "-n"}, grepArgs)},
			{"rg --json | node", slices.Concat(pipe, []string{nodeParse(true), "/bin/rg", "--json"}, grepArgs)},
		}},
		{searchEnv{rg: "/bin/rg", jobs: 1}, search{"grep", map[string]any{"pattern": "x"}}, []floor{
			{"rg --json", []string{"/bin/rg", "--json", "--regexp=x", "--threads=1"}},
			{"rg -n", []string{"/bin/rg", "-n", "--regexp=x", "--threads=1"}},
		}},
		{searchEnv{node: "/bin/node", jobs: 1}, glob, nil},
	} {
		got := tc.env.floors(tc.s)
		if !slices.EqualFunc(got, tc.want, func(a, b floor) bool { return a.name == b.name && slices.Equal(a.argv, b.argv) }) {
			t.Errorf("%s with %+v:\ngot  %q\nwant %q", tc.s, tc.env, got, tc.want)
		}
	}
}

// The synthetic tree: 100 files a directory, one in ten a _test.go file,
// about ten holding the grep workloads' literal.
func TestMakeTree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tree")
	if err := makeTree(dir, 250); err != nil {
		t.Fatal(err)
	}
	subs, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range subs {
		names = append(names, s.Name())
	}
	if want := []string{"d0000", "d0001", "d0002"}; !slices.Equal(names, want) {
		t.Fatalf("directories %q, want %q", names, want)
	}
	files, tests, matches := 0, 0, 0
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		if strings.HasSuffix(path, "_test.go") {
			tests++
		}
		data, err := os.ReadFile(path)
		if len(data) != 8*lineLen {
			t.Errorf("%s has %d bytes", path, len(data))
		}
		if bytes.Contains(data, []byte("func main")) {
			matches++
		}
		return err
	})
	if err != nil || files != 250 || tests != 25 || matches != 10 {
		t.Fatalf("%d files, %d _test.go, %d matching (%v), want 250, 25, 10", files, tests, matches, err)
	}
}

// The large file's marked lines are the match line, the others the
// generated ones, every line lineLen bytes.
func TestWriteLinesMarked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := writeLines(path, 4*lineLen, 1, 3); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := string(appendLine(nil, 0)) + matchLine + string(appendLine(nil, 2)) + matchLine
	if string(data) != want || len(matchLine) != lineLen {
		t.Fatalf("got %q, want %q", data, want)
	}
}

// A replay workload runs the call's arguments as the one line of a replay
// file; a write or an edit runs with --no-policy instead of reading first.
func TestReplayOf(t *testing.T) {
	w, err := callOf(t.TempDir(), "grep x", "grep", map[string]any{"pattern": "func main", "include": "*.go"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := replayOf(w, "/bin/demo")
	if err != nil {
		t.Fatal(err)
	}
	line, _ := os.ReadFile(r.argsFile)
	if want := `{"tool":"grep","args":{"include":"*.go","pattern":"func main"}}` + "\n"; string(line) != want {
		t.Errorf("line %q, want %q", line, want)
	}
	if r.name != "grep x (demo replay)" || r.replay != "/bin/demo" || r.tool != "grep" || r.argsFile == w.argsFile {
		t.Errorf("replay workload %+v", r)
	}
	w.readFirst, w.noPolicy = "edit.txt", true
	if r, err := replayOf(w, "/bin/demo"); err != nil || r.readFirst != "" || !r.noPolicy {
		t.Errorf("replay of an edit %+v, %v", r, err)
	}
}

// Where rg is installed, each floor selects what the synthetic tree
// holds: rg lists its 25 test files, finds its 10 lines, and the Node
// floor counts the lines rg prints.
func TestSearchFloorsRun(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("SKIPPED: rg not found (Debian package ripgrep): the floors are not checked")
	}
	node, _ := exec.LookPath("node")
	dir := filepath.Join(t.TempDir(), "tree")
	if err := makeTree(dir, 250); err != nil {
		t.Fatal(err)
	}
	env := searchEnv{rg: rg, node: node, jobs: 2}
	for _, tc := range []struct {
		s           search
		lines, want int // lines of the first floor's output; of them, those containing want
		has         string
	}{
		{search{"glob", map[string]any{"pattern": "**/*_test.go"}}, 25, 25, "_test.go"},
		{search{"grep", map[string]any{"pattern": "func main"}}, 31, 10, `"type":"match"`},
		{search{"grep", map[string]any{"pattern": "func main", "include": "*.go"}}, 16, 5, `"type":"match"`},
	} {
		var counts []string
		for i, f := range env.floors(tc.s) {
			cmd := exec.Command(f.argv[0], f.argv[1:]...)
			cmd.Dir = dir
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %s: %v", tc.s, f.name, err)
			}
			lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			switch {
			case i == 0:
				if n := countContaining(lines, tc.has); len(lines) != tc.lines || n != tc.want {
					t.Errorf("%s: %s printed %d lines, %d with %q; want %d, %d", tc.s, f.name, len(lines), n, tc.has, tc.lines, tc.want)
				}
			case strings.HasSuffix(f.name, "| node"):
				counts = append(counts, strings.TrimSpace(string(out)))
			}
		}
		if node != "" && !slices.Equal(counts, []string{strconv.Itoa(tc.lines)}) {
			t.Errorf("%s: the Node floor counted %q, want %d", tc.s, counts, tc.lines)
		}
	}
}

func countContaining(lines []string, s string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}
