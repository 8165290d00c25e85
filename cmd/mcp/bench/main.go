// Command bench measures two file operations through MCP over stdio, against
// cmd/mcp and against @modelcontextprotocol/server-filesystem (npm), with
// the same Go SDK client:
//
//   - the first page of a large file (512 MiB by default): gordis's read
//     with its default window (2000 lines, capped at 50 KiB), then
//     server-filesystem's read_text_file with head set to the number of
//     lines gordis returned, so that both carry the same text;
//   - one literal edit in the middle of a 10 MiB file (gordis reads the
//     file's first page once first, as its read-before-write policy wants).
//
// It prints the median of --runs calls per operation and server, the ratio,
// and each server's peak resident memory. Run it from the repository:
//
//	go run ./cmd/mcp/bench [--runs 5] [--read-mib 512] [--edit-mib 10]
//
// Without --filesystem-server it installs the pinned server-filesystem
// into a temporary directory with npm; without node or npm it measures
// gordis alone. docs/mcp.md reports its figures.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis/internal/peakrss"
)

// filesystemServer is the npm package measured against, pinned.
const filesystemServer = "@modelcontextprotocol/server-filesystem@2026.8.31"

// callTimeout bounds one call: a server that cannot do the job in time
// is reported as such, not waited for.
const callTimeout = 120 * time.Second

// marker is the unique line the edit replaces, back and forth.
const (
	marker = "the line the benchmark edits"
	edited = "the line the benchmark edited"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	runs := flag.Int("runs", 5, "calls per operation and server (the median is reported)")
	readMiB := flag.Int("read-mib", 512, "size of the file whose first page is read, in MiB")
	editMiB := flag.Int("edit-mib", 10, "size of the file edited, in MiB")
	gordisBin := flag.String("gordis", "", "the cmd/mcp `binary` (default: go build ./cmd/mcp)")
	sfsDir := flag.String("filesystem-server", "", "an npm prefix `DIR` with "+filesystemServer+" installed (default: npm install into a temporary directory)")
	flag.Parse()
	if *runs < 1 {
		return errors.New("--runs must be at least 1")
	}

	tmp, err := os.MkdirTemp("", "gordis-mcp-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ws := filepath.Join(tmp, "workspace")
	if err := os.Mkdir(ws, 0o755); err != nil {
		return err
	}
	big, mid := filepath.Join(ws, "big.txt"), filepath.Join(ws, "mid.txt")
	if err := writeLines(big, int64(*readMiB)<<20, ""); err != nil {
		return err
	}

	if *gordisBin == "" {
		*gordisBin = filepath.Join(tmp, "mcp")
		if out, err := exec.Command("go", "build", "-o", *gordisBin, "./cmd/mcp").CombinedOutput(); err != nil {
			return fmt.Errorf("building cmd/mcp (run from the repository): %v\n%s", err, out)
		}
	}
	servers := []server{gordisServer(*gordisBin, ws)}
	if sfs, err := filesystemServerCommand(*sfsDir, tmp, ws); err != nil {
		fmt.Fprintln(os.Stderr, "bench: server-filesystem left out:", err)
	} else {
		servers = append(servers, sfs)
	}

	results := make([]measurement, len(servers))
	for i, s := range servers {
		// Each server edits a fresh copy: the edits go back and forth, and
		// an odd number of them leaves the other text in place.
		if err := writeLines(mid, int64(*editMiB)<<20, marker); err != nil {
			return err
		}
		lines := results[0].pageLines // gordis is measured first
		if results[i], err = measure(s, big, mid, *runs, lines); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	report(os.Stdout, servers, results, *readMiB, *editMiB, *runs)
	return nil
}

// writeLines fills path with numbered lines of about 100 bytes up to size,
// with middle, if not empty, as the line halfway through.
func writeLines(path string, size int64, middle string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var written int64
	placed := middle == ""
	for n := 1; written < size; n++ {
		line := fmt.Sprintf("%09d the quick brown fox jumps over the lazy dog, then naps in the sun for a while.\n", n)
		if !placed && written >= size/2 {
			line, placed = middle+"\n", true
		}
		k, err := w.WriteString(line)
		if err != nil {
			f.Close()
			return err
		}
		written += int64(k)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// server is how to start one server and phrase the two operations for it.
type server struct {
	name    string
	command func() *exec.Cmd
	// prepare runs once per session before the edits (gordis: the read
	// its policy requires).
	prepare func(path string) *mcp.CallToolParams
	// read asks for the first page; lines is how many lines gordis's page
	// held, for a server that must be told.
	read func(path string, lines int) *mcp.CallToolParams
	edit func(path, from, to string) *mcp.CallToolParams
}

func gordisServer(bin, ws string) server {
	read := func(path string, _ int) *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"file_path": path}}
	}
	return server{
		name:    "gordis (cmd/mcp)",
		command: func() *exec.Cmd { return exec.Command(bin, "--workspace", ws) },
		prepare: func(path string) *mcp.CallToolParams { return read(path, 0) },
		read:    read,
		edit: func(path, from, to string) *mcp.CallToolParams {
			return &mcp.CallToolParams{Name: "edit", Arguments: map[string]any{"file_path": path, "old_string": from, "new_string": to}}
		},
	}
}

func filesystemServerCommand(dir, tmp, ws string) (server, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return server{}, err
	}
	if dir == "" {
		npm, err := exec.LookPath("npm")
		if err != nil {
			return server{}, err
		}
		dir = filepath.Join(tmp, "npm")
		if out, err := exec.Command(npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", dir, filesystemServer).CombinedOutput(); err != nil {
			return server{}, fmt.Errorf("npm install: %v\n%s", err, out)
		}
	}
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		return server{}, err
	}
	return server{
		name:    "server-filesystem",
		command: func() *exec.Cmd { return exec.Command(node, script, ws) },
		read: func(path string, lines int) *mcp.CallToolParams {
			return &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": path, "head": lines}}
		},
		edit: func(path, from, to string) *mcp.CallToolParams {
			return &mcp.CallToolParams{Name: "edit_file", Arguments: map[string]any{"path": path, "edits": []map[string]string{{"oldText": from, "newText": to}}}}
		},
	}, nil
}

// measurement is the outcome for one server; a failed operation keeps
// its error.
type measurement struct {
	read, edit       time.Duration
	readErr, editErr error
	pageLines        int   // lines in the first page
	maxRSS           int64 // bytes, of the server process
}

func measure(s server, big, mid string, runs, lines int) (measurement, error) {
	var m measurement
	cmd := s.command()
	cmd.Stderr = io.Discard
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return m, err
	}
	m.read, m.readErr = median(runs, func() error {
		text, err := call(cs, s.read(big, lines))
		m.pageLines = numberedLines(text)
		return err
	})
	if s.prepare != nil {
		if _, err := call(cs, s.prepare(mid)); err != nil {
			cs.Close()
			return m, fmt.Errorf("preparing the edit: %w", err)
		}
	}
	n := 0
	m.edit, m.editErr = median(runs, func() error {
		from, to := marker, edited
		if n%2 == 1 {
			from, to = to, from
		}
		n++
		_, err := call(cs, s.edit(mid, from, to))
		return err
	})
	if err := cs.Close(); err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		return m, err
	}
	m.maxRSS, _ = peakrss.Of(cmd.ProcessState)
	return m, nil
}

// call returns the text of a successful call.
func call(cs *mcp.ClientSession, params *mcp.CallToolParams) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		return "", err
	}
	var text string
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if res.IsError {
		return "", fmt.Errorf("%s failed: %.200s", params.Name, text)
	}
	return text, nil
}

// numberedLines counts the lines of a gordis read window ("N: text").
func numberedLines(text string) int {
	n := 0
	for line := range strings.Lines(text) {
		digits := len(line) - len(strings.TrimLeft(line, "0123456789"))
		if digits > 0 && strings.HasPrefix(line[digits:], ": ") {
			n++
		}
	}
	return n
}

// median times fn runs times; the first failure stops it.
func median(runs int, fn func() error) (time.Duration, error) {
	times := make([]time.Duration, 0, runs)
	for range runs {
		start := time.Now()
		if err := fn(); err != nil {
			return 0, err
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

func report(w io.Writer, servers []server, results []measurement, readMiB, editMiB, runs int) {
	fmt.Fprintf(w, "median of %d calls per cell; MCP over stdio, Go SDK client\n\n", runs)
	header := []string{"operation"}
	for _, s := range servers {
		header = append(header, s.name)
	}
	if len(servers) == 2 {
		header = append(header, "ratio (server-filesystem / gordis)")
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat(" --- |", len(header)))
	row := func(op string, get func(measurement) (time.Duration, error)) {
		cells := []string{op}
		var ds []time.Duration
		for _, m := range results {
			d, err := get(m)
			if err != nil {
				cells = append(cells, "failed: "+strings.ReplaceAll(err.Error(), "\n", " "))
				ds = append(ds, 0)
				continue
			}
			cells = append(cells, d.Round(10*time.Microsecond).String())
			ds = append(ds, d)
		}
		if len(ds) == 2 {
			if ds[0] > 0 && ds[1] > 0 {
				cells = append(cells, fmt.Sprintf("%.1f×", float64(ds[1])/float64(ds[0])))
			} else {
				cells = append(cells, "n/a")
			}
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	row(fmt.Sprintf("first page (%d lines) of a %d MiB file", results[0].pageLines, readMiB), func(m measurement) (time.Duration, error) { return m.read, m.readErr })
	row(fmt.Sprintf("one edit in a %d MiB file", editMiB), func(m measurement) (time.Duration, error) { return m.edit, m.editErr })
	var rss []string
	for i, m := range results {
		rss = append(rss, fmt.Sprintf("%s %d MiB", servers[i].name, m.maxRSS>>20))
	}
	fmt.Fprintf(w, "\npeak resident memory: %s\n", strings.Join(rss, ", "))
}
