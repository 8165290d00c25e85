package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The search workloads: glob and grep over a real tree, a synthetic tree
// and one large file, each call beside rg making the same file selection
// with the command line upstream runs (spec/search.md, "The two commands"),
// and each again as a line of `demo replay`, the level a user touches.

// searchMaxRSS is the peak RSS issue 19 allows any search call.
const searchMaxRSS = 64 << 20

// vcsDirs are the directories upstream's glob command line excludes.
var vcsDirs = []string{".git", ".svn", ".hg", ".bzr", ".jj", ".sl"}

// matchLine stands in for a few generated lines of the synthetic tree and
// the large file: the literal the grep workloads look for, lineLen bytes.
var matchLine = fmt.Sprintf("%-*s\n", lineLen-1, "func main() { // one of the few lines grep finds")

// A search is one glob or grep call.
type search struct {
	tool string
	args map[string]any
}

func (s search) String() string {
	if inc, ok := s.args["include"]; ok {
		return fmt.Sprintf("%s %s, include %s", s.tool, s.args["pattern"], inc)
	}
	return fmt.Sprintf("%s %s", s.tool, s.args["pattern"])
}

// searchEnv is what the search workloads run beside the tools.
type searchEnv struct {
	// rg and node are the commands' paths, "" when missing: the floors
	// that need them are left out.
	rg, node string
	// jobs is rg's thread count: the child's GOMAXPROCS.
	jobs int
	// demo is the built demo binary that runs the replay rows.
	demo string
}

// floors are the commands s is compared with: rg with upstream's command
// line, rg printing plain lines for grep, and upstream's own cost, rg
// piped into Node, which reads the whole output and splits it (parsing
// each line as JSON for grep).
func (e searchEnv) floors(s search) []floor {
	if e.rg == "" {
		return nil
	}
	threads := "--threads=" + strconv.Itoa(e.jobs)
	pattern := s.args["pattern"].(string)
	var out []floor
	var upstream []string
	switch s.tool {
	case "glob":
		upstream = []string{"--files", "--glob=" + pattern, "--sort=modified", "--no-ignore", "--hidden"}
		for _, v := range vcsDirs {
			upstream = append(upstream, "--glob=!**/"+v, "--glob=!**/"+v+"/**")
		}
		upstream = append(upstream, threads)
		out = []floor{{"rg --files", append([]string{e.rg}, upstream...)}}
	case "grep":
		selection := []string{"--regexp=" + pattern}
		if inc, ok := s.args["include"].(string); ok {
			selection = append(selection, "--glob="+inc)
		}
		selection = append(selection, threads)
		upstream = append([]string{"--json"}, selection...)
		out = []floor{
			{"rg --json", append([]string{e.rg}, upstream...)},
			{"rg -n", append([]string{e.rg, "-n"}, selection...)},
		}
	}
	if e.node != "" {
		out = append(out, floor{out[0].name + " | node", append([]string{"sh", "-c", `node=$1 script=$2; shift 2; "$@" | "$node" -e "$script"`,
			"sh", e.node, nodeParse(s.tool == "grep"), e.rg}, upstream...)})
	}
	return out
}

// nodeParse is the Node script of the upstream floor.
func nodeParse(parseJSON bool) string {
	each := "n++"
	if parseJSON {
		each = "JSON.parse(l), n++"
	}
	return `let s = ""; process.stdin.setEncoding("utf8"); process.stdin.on("data", c => { s += c }); ` +
		`process.stdin.on("end", () => { let n = 0; for (const l of s.split("\n")) if (l) ` + each + `; console.log(n) })`
}

// prepareSearch creates the trees of the search workloads of the tools
// want selects, and their argument files, in dir: a copy of sz.src, a
// synthetic tree of sz.treeFiles files and one file of sz.grepMiB MiB,
// each its own workspace.
func prepareSearch(dir string, sz sizes, want func(tool string) bool, env searchEnv) ([]workload, error) {
	realTree := filepath.Join(dir, "real")
	n, err := copyTree(sz.src, realTree)
	if err != nil {
		return nil, err
	}
	synthetic := filepath.Join(dir, "synthetic")
	if err := makeTree(synthetic, sz.treeFiles); err != nil {
		return nil, err
	}
	large := filepath.Join(dir, "large")
	lines := (int64(sz.grepMiB) << 20) / lineLen
	if err := os.Mkdir(large, 0o755); err != nil {
		return nil, err
	}
	if err := writeLines(filepath.Join(large, "large.txt"), int64(sz.grepMiB)<<20, lines/4, lines/2, lines/4*3); err != nil {
		return nil, err
	}

	testFiles := search{"glob", map[string]any{"pattern": "**/*_test.go"}}
	literal := search{"grep", map[string]any{"pattern": "func main"}}
	trees := []struct {
		workspace, label string
		searches         []search
	}{
		{realTree, fmt.Sprintf("%s (%d files)", filepath.Base(sz.src), n), []search{
			testFiles,
			literal,
			{"grep", map[string]any{"pattern": `func \(\w+ \*\w+\) Close\(`}},
			{"grep", map[string]any{"pattern": "func main", "include": "*.go"}},
		}},
		{synthetic, fmt.Sprintf("synthetic (%d files)", sz.treeFiles), []search{testFiles, literal}},
		{large, fmt.Sprintf("one %d MiB file", sz.grepMiB), []search{literal}},
	}
	var ws []workload
	for _, t := range trees {
		for _, s := range t.searches {
			if !want(s.tool) {
				continue
			}
			w, err := callOf(dir, fmt.Sprintf("%s in %s", s, t.label), s.tool, s.args, env.floors(s)...)
			if err != nil {
				return nil, err
			}
			w.workspace, w.maxRSS = t.workspace, searchMaxRSS
			replay, err := replayOf(w, env.demo)
			if err != nil {
				return nil, err
			}
			ws = append(ws, w, replay)
		}
	}
	return ws, nil
}

// replayOf is w run by `demo replay` with the binary demo: its arguments
// become the one line of a replay file, copied in as they are (a write's
// are tens of MiB).
func replayOf(w workload, demo string) (workload, error) {
	args, err := os.Open(w.argsFile)
	if err != nil {
		return w, err
	}
	defer args.Close()
	w.name += " (demo replay)"
	w.argsFile = strings.TrimSuffix(w.argsFile, ".json") + ".jsonl"
	w.replay = demo
	if w.noPolicy {
		w.readFirst = ""
	}
	line, err := os.Create(w.argsFile)
	if err != nil {
		return w, err
	}
	tool, _ := json.Marshal(w.tool)
	_, err = fmt.Fprintf(line, `{"tool":%s,"args":`, tool)
	if err == nil {
		_, err = io.Copy(line, args)
	}
	if err == nil {
		_, err = io.WriteString(line, "}\n")
	}
	return w, errors.Join(err, line.Close())
}

// buildDemo builds cmd/demo into dir, for the replay rows.
func buildDemo(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, "demo")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "github.com/gordis-run/gordis/cmd/demo")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build of cmd/demo: %v: %s", err, bytes.TrimSpace(msg))
	}
	return out, nil
}

// runReplay runs the replay workload w and checks that every result it
// prints is a success: a tool missing from the deployment is an error
// result, not a failed process.
func runReplay(ctx context.Context, w workload) (sample, error) {
	var out bytes.Buffer
	argv := []string{w.replay, "replay", "--workspace", w.workspace, w.argsFile}
	if w.noPolicy {
		argv = slices.Insert(argv, 2, "--no-policy")
	}
	s, err := runCommand(ctx, argv, w.workspace, w.reset, &out)
	if err != nil {
		return s, err
	}
	dec := json.NewDecoder(&out)
	for {
		var res struct {
			Tool    string `json:"tool"`
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		}
		if err := dec.Decode(&res); err == io.EOF {
			return s, nil
		} else if err != nil {
			return s, fmt.Errorf("demo replay printed %q: %w", out.String(), err)
		}
		if res.IsError {
			return s, fmt.Errorf("%s: %s", res.Tool, res.Text)
		}
	}
}

// copyTree copies the directories and regular files under src to dst,
// which it creates, and returns the number of files. Anything else
// (symbolic links, devices) is left out.
func copyTree(src, dst string) (files int, err error) {
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(target, 0o755)
		case d.Type().IsRegular():
			files++
			return copyFile(path, target)
		}
		return nil
	})
	return files, err
}

// makeTree creates dir with n files of 8 generated lines, 100 a
// directory: one in ten a _test.go file, three in ten other .go files, the
// rest .txt; about ten of them (at least one) hold matchLine.
func makeTree(dir string, n int) error {
	stride := max(n/10, 1)
	var b []byte
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("d%04d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return err
			}
		}
		ext := ".txt"
		switch {
		case i%10 == 0:
			ext = "_test.go"
		case i%10 < 4:
			ext = ".go"
		}
		b = b[:0]
		for j := range int64(8) {
			if j == 4 && i%stride == stride/2 {
				b = append(b, matchLine...)
				continue
			}
			b = appendLine(b, int64(i)*8+j)
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%06d%s", i, ext)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
