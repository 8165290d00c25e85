package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A workload is one tool call in a fresh process and its floors: the
// standard commands that do the same I/O.
type workload struct {
	name string
	// workspace is the deployment's workspace, and the floors' working
	// directory.
	workspace string
	// tool and argsFile make the call; readFirst, when set, is read first
	// in the same session (the policy wants it before an edit).
	tool, argsFile, readFirst string
	// replay, when set, is a built demo binary: the call runs as the one
	// line of `demo replay` in argsFile, and only the whole process is
	// timed, as a user running it sees it.
	replay string
	// noPolicy runs the replay with --no-policy, in place of readFirst.
	noPolicy bool
	// floors are the commands the call is compared with; none when the
	// command is missing here.
	floors []floor
	// maxRSS, when set, is the peak RSS the call must stay under; the
	// table marks a call above it.
	maxRSS int64
	// reset, when set, runs before every call and every floor, outside the
	// timing: it puts back the files the previous one changed.
	reset func() error
}

// A floor is a command line and how the table shows it.
type floor struct {
	name string
	argv []string
}

// lineLen is the length of every generated line, newline included, so
// that a file of n bytes has n/lineLen lines.
const lineLen = 64

// replayMaxRSS bounds the peak RSS of the file tools' replay rows (issue
// 20): twice the content written, or what a 2,000-line read may take.
func replayMaxRSS(w workload, content int64) workload {
	if w.replay != "" {
		w.maxRSS = max(2*content, 32<<20)
	}
	return w
}

// prepare creates, in dir, the files and argument files of the file
// tools' workloads that want selects (prepareSearch does glob's and
// grep's). Each call runs again as the one line of `demo replay` with the
// built binary demo, the level a user touches.
func prepare(dir string, sz sizes, want func(tool string) bool, demo string) ([]workload, error) {
	var ws []workload
	// add appends w and its replay; content is what the call writes, for
	// the replay's bound.
	add := func(w workload, content int64, err error) error {
		if err != nil {
			return err
		}
		r, err := replayOf(w, demo)
		ws = append(ws, w, replayMaxRSS(r, content))
		return err
	}

	if want("read") {
		big := filepath.Join(dir, "big.txt")
		if err := writeLines(big, int64(sz.readMiB)<<20); err != nil {
			return nil, err
		}
		lines := (int64(sz.readMiB) << 20) / lineLen
		wc := floor{"wc -l", []string{"wc", "-l", big}}
		for _, r := range []struct {
			name string
			args map[string]any
		}{
			{fmt.Sprintf("read head %d MiB", sz.readMiB), map[string]any{"file_path": big}},
			{fmt.Sprintf("read tail %d MiB", sz.readMiB), map[string]any{"file_path": big, "offset": lines - 99}},
		} {
			w, err := callOf(dir, r.name, "read", r.args, wc)
			if err := add(w, 0, err); err != nil {
				return nil, err
			}
		}
	}

	if want("list") {
		listed := filepath.Join(dir, "listed")
		if err := makeEntries(listed, sz.listEntries); err != nil {
			return nil, err
		}
		w, err := callOf(dir, fmt.Sprintf("list %d entries", sz.listEntries), "list", map[string]any{"path": listed}, floor{"ls -f", []string{"ls", "-f", listed}})
		if err := add(w, 0, err); err != nil {
			return nil, err
		}
	}

	if want("edit") {
		// The edit changes one line in the middle of its file; reset
		// restores the file from a pristine copy before each run.
		pristine, edited := filepath.Join(dir, "edit.orig"), filepath.Join(dir, "edit.txt")
		if err := writeLines(pristine, int64(sz.editMiB)<<20); err != nil {
			return nil, err
		}
		mid := string(appendLine(nil, (int64(sz.editMiB)<<20)/lineLen/2))
		copyDst := filepath.Join(dir, "edit.copy")
		w, err := callOf(dir, fmt.Sprintf("edit 1 line of %d MiB", sz.editMiB), "edit",
			map[string]any{"file_path": edited, "old_string": mid[:lineLen-1], "new_string": "edited"},
			floor{"cp + sync + mv", []string{"sh", "-c", `cp "$1" "$2" && sync "$2" && mv "$2" "$1"`, "sh", edited, copyDst}})
		w.readFirst, w.noPolicy = edited, true
		w.reset = func() error { return copyFile(pristine, edited) }
		if err := add(w, int64(sz.editMiB)<<20, err); err != nil {
			return nil, err
		}
	}

	if want("write") {
		for _, n := range sz.writeMiB {
			target := filepath.Join(dir, fmt.Sprintf("new-%d.txt", n))
			argsFile := filepath.Join(dir, fmt.Sprintf("args-write-%d.json", n))
			w := workload{
				name: fmt.Sprintf("write %d MiB new file", n), workspace: dir, tool: "write", argsFile: argsFile, noPolicy: true,
				floors: []floor{{"dd conv=fsync", []string{"dd", "if=/dev/zero", "of=" + target, "bs=1M", "count=" + strconv.Itoa(n), "conv=fsync", "status=none"}}},
				reset:  func() error { return removeIfExists(target) },
			}
			if err := add(w, int64(n)<<20, writeArgs(argsFile, target, int64(n)<<20)); err != nil {
				return nil, err
			}
		}
	}
	return ws, nil
}

// callOf writes the arguments of a call to a file of dir, without a final
// newline (a replay line is made of them), and returns its workload, in
// the workspace dir.
func callOf(dir, name, tool string, args map[string]any, floors ...floor) (workload, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return workload{}, err
	}
	f, err := os.CreateTemp(dir, "args-*.json")
	if err != nil {
		return workload{}, err
	}
	_, err = f.Write(raw)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return workload{name: name, workspace: dir, tool: tool, argsFile: f.Name(), floors: floors}, err
}

// padding fills a generated line after its number.
var padding = strings.Repeat("abcdefghij", lineLen/10)[:lineLen-len("line 000000000000 \n")]

// appendLine appends line i of the generated files: its number, padding
// and a newline, lineLen bytes in all.
func appendLine(b []byte, i int64) []byte {
	b = append(b, "line "...)
	n := len(b)
	b = strconv.AppendInt(b, i, 10)
	for len(b)-n < 12 { // zero-pad the number to 12 digits
		b = slices.Insert(b, n, '0')
	}
	b = append(b, ' ')
	b = append(b, padding...)
	return append(b, '\n')
}

// writeLines creates path with size bytes of numbered lines, the marked
// ones replaced by matchLine.
func writeLines(path string, size int64, marked ...int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<20)
	for i := int64(0); i < size/lineLen; i++ {
		if slices.Contains(marked, i) {
			buf = append(buf, matchLine...)
		} else {
			buf = appendLine(buf, i)
		}
		if len(buf) > cap(buf)-lineLen {
			if _, err := f.Write(buf); err != nil {
				f.Close()
				return err
			}
			buf = buf[:0]
		}
	}
	_, err = f.Write(buf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeArgs writes the arguments of a write of size bytes of numbered
// lines to target, streaming the content: the generated lines need no JSON
// escape but their newline.
func writeArgs(path, target string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	name, _ := json.Marshal(target)
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintf(w, `{"file_path": %s, "content": "`, name)
	var line []byte
	for i := int64(0); i < size/lineLen; i++ {
		line = appendLine(line[:0], i)
		w.Write(line[:lineLen-1])
		w.WriteString(`\n`)
	}
	w.WriteString(`"}`)
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// makeEntries creates dir with n entries: one in a hundred a directory,
// the others empty files.
func makeEntries(dir string, n int) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for i := range n {
		name := filepath.Join(dir, fmt.Sprintf("entry-%06d", i))
		if i%100 == 0 {
			if err := os.Mkdir(name, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.WriteFile(name, nil, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}
