package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/registry"
)

// replay runs `demo replay args...` in process with input on stdin.
func replay(t *testing.T, input string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = runReplay(args, strings.NewReader(input), &out, &errOut)
	return code, out.String(), errOut.String()
}

// replayWorkspace returns a temporary workspace holding a.txt = "one\n".
func replayWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// wantReplayLines compares output lines exactly; $WS stands for the workspace.
func wantReplayLines(t *testing.T, got, ws string, want ...string) {
	t.Helper()
	gotLines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if got == "" {
		gotLines = nil
	}
	for i := range max(len(gotLines), len(want)) {
		var g, w string
		if i < len(gotLines) {
			g = gotLines[i]
		}
		if i < len(want) {
			w = strings.ReplaceAll(want[i], "$WS", ws)
		}
		if g != w {
			t.Errorf("output line %d:\n got %s\nwant %s", i+1, g, w)
		}
	}
}

const (
	editOne        = `{"tool":"edit","args":{"file_path":"a.txt","old_string":"one","new_string":"two"}`
	notObserved    = `"isError":true,"text":"Error: edit requires reading \"$WS/a.txt\" first","error":{"message":"edit requires reading \"$WS/a.txt\" first","name":"FsError","code":"FS_NOT_OBSERVED"}}`
	edited         = `"isError":false,"text":"The file $WS/a.txt has been updated successfully.","value":{"path":"$WS/a.txt","before":"one\n","after":"two\n"}}`
	readOne        = `"isError":false,"text":"<path>$WS/a.txt</path>\n<type>file</type>\n<content>\n1: one\n\n(End of file - total 1 lines)\n</content>","value":{"path":"$WS/a.txt","offset":1,"lines":[{"number":1,"text":"one"}],"totalLines":1}}`
	abortedEarly   = `"isError":true,"text":"Error: tool call aborted before dispatch","error":{"message":"tool call aborted before dispatch","name":"AbortError","code":"ABORTED_BEFORE_DISPATCH"}}`
	listWorkspace  = `"isError":false,"text":"<path>$WS</path>\n<type>directory</type>\n<content>\na.txt\n\n(1 entry: 0 directories, 1 file)\n</content>","value":{"path":"$WS","offset":1,"entries":[{"name":"a.txt","type":"file"}],"totalEntries":1,"counts":{"directories":0,"files":1,"other":0}}}`
	badOffsetPlain = `"isError":true,"text":"Error: offset must be a positive integer","error":{"message":"offset must be a positive integer"}}`
)

// Every field of the format, under the policy: sessions (default and named,
// kept apart by the policy), cancel on a call and on a batch, batches, blank
// lines, and both result shapes (error with and without name and code).
func TestReplayPolicy(t *testing.T) {
	ws := replayWorkspace(t)
	input := strings.Join([]string{
		editOne + `}`, // not read yet: refused
		``,            // blank lines are skipped
		`   `,
		`{"tool":"read","args":{"file_path":"a.txt"}}`,
		editOne + `,"session":"other"}`, // another session has not read it
		editOne + `,"session":"main"}`,  // main has
		`{"tool":"read","args":{"file_path":"a.txt"},"cancel":true}`,
		`{"tool":"nope"}`,
		`{"batch":[{"tool":"list"},{"tool":"read","args":{"file_path":"a.txt","offset":0},"session":"other"}]}`,
		`{"batch":[{"tool":"list","args":{}}],"cancel":true}`,
		`{"tool":"read","args":{"file_path":"missing.txt"}}`,
		`{"tool":"read","args":{"file_path":5}}`,
	}, "\n") // no final newline: the last line still runs
	code, stdout, stderr := replay(t, input, "--workspace", ws)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	wantReplayLines(t, stdout, ws,
		`{"tool":"edit","session":"main",`+notObserved,
		`{"tool":"read","session":"main",`+readOne,
		`{"tool":"edit","session":"other",`+notObserved,
		`{"tool":"edit","session":"main",`+edited,
		`{"tool":"read","session":"main",`+abortedEarly,
		`{"tool":"nope","session":"main","isError":true,"text":"Error: unknown tool \"nope\"","error":{"message":"unknown tool \"nope\"","name":"ToolNotFound","code":"TOOL_NOT_FOUND"}}`,
		`{"tool":"list","session":"main",`+listWorkspace,
		`{"tool":"read","session":"other",`+badOffsetPlain,
		`{"tool":"list","session":"main",`+abortedEarly,
		`{"tool":"read","session":"main","isError":true,"text":"Error: cannot read \"$WS/missing.txt\": not found","error":{"message":"cannot read \"$WS/missing.txt\": not found","name":"FsError","code":"FS_NOT_FOUND"}}`,
		`{"tool":"read","session":"main","isError":true,"text":"Error: invalid arguments: \"file_path\" must be a string","error":{"message":"invalid arguments: \"file_path\" must be a string","name":"ToolArgsError","code":"INVALID_ARGS"}}`,
	)
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "two\n" {
		t.Errorf("a.txt = %q, want the edit of session main", b)
	}
}

// --no-policy: the same first edit succeeds without a read.
func TestReplayNoPolicy(t *testing.T) {
	ws := replayWorkspace(t)
	code, stdout, stderr := replay(t, editOne+"}\n", "--no-policy", "--workspace", ws)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	wantReplayLines(t, stdout, ws, `{"tool":"edit","session":"main",`+edited)
}

// A batch is one assistant message: list and read run in parallel, the
// exclusive write alone, and results keep the input order.
func TestReplayBatchOrder(t *testing.T) {
	ws := replayWorkspace(t)
	input := `{"batch":[{"tool":"read","args":{"file_path":"a.txt"}},` +
		`{"tool":"write","args":{"file_path":"b.txt","content":"b"},"session":"s2"},` +
		`{"tool":"list"}]}` + "\n"
	code, stdout, stderr := replay(t, input, "--workspace", ws)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var r struct {
			Tool, Session string
			IsError       bool
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.IsError {
			t.Errorf("%s failed: %s", r.Tool, line)
		}
		got = append(got, r.Tool+"@"+r.Session)
	}
	if want := "read@main write@s2 list@main"; strings.Join(got, " ") != want {
		t.Errorf("results = %q, want %q", got, want)
	}
}

func TestReplayInputSources(t *testing.T) {
	ws := replayWorkspace(t)
	file := filepath.Join(t.TempDir(), "calls.jsonl")
	if err := os.WriteFile(file, []byte(`{"tool":"list"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := `{"tool":"list","session":"main",` + listWorkspace
	t.Run("file", func(t *testing.T) {
		code, stdout, _ := replay(t, `{"tool":"nope"}`, "--workspace", ws, file)
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		wantReplayLines(t, stdout, ws, want) // stdin is ignored
	})
	t.Run("dash is stdin", func(t *testing.T) {
		code, stdout, _ := replay(t, `{"tool":"list"}`, "--workspace", ws, "-")
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		wantReplayLines(t, stdout, ws, want)
	})
	t.Run("default workspace is the cwd", func(t *testing.T) {
		t.Chdir(ws)
		code, stdout, _ := replay(t, `{"tool":"list"}`)
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		wantReplayLines(t, stdout, ws, want)
	})
	t.Run("long line", func(t *testing.T) { // beyond bufio.Scanner's 64 KiB token limit
		ws := replayWorkspace(t)
		content := strings.Repeat("x", 1<<20)
		code, stdout, stderr := replay(t, `{"tool":"write","args":{"file_path":"big.txt","content":"`+content+`"}}`, "--workspace", ws)
		if code != 0 || !strings.Contains(stdout, `"isError":false`) {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "big.txt")); len(b) != len(content) {
			t.Errorf("big.txt has %d bytes, want %d", len(b), len(content))
		}
	})
	t.Run("empty input", func(t *testing.T) {
		code, stdout, stderr := replay(t, "\n\n", "--workspace", ws)
		if code != 0 || stdout != "" || stderr != "" {
			t.Errorf("exit %d, stdout %q, stderr %q; want 0 and nothing", code, stdout, stderr)
		}
	})
}

// A malformed line stops the run with status 2 and its line number; the
// lines before it have run and printed.
func TestReplayMalformed(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"tool":"list"`, "line 3: invalid JSON at byte 14: the line ends before the JSON object does"},
		{`{"tool":"list","args":{"file_path":"a`, "line 3: invalid JSON at byte 37: the line ends before the JSON object does"},
		{`not json`, "line 3: expected a JSON object"},
		{`["list"]`, "line 3: expected a JSON object"},
		{`{"tool":"list"} {"tool":"list"}`, "line 3: unexpected data after the JSON object"},
		{`{"tool":"list","sesion":"x"}`, `line 3: unknown field "sesion"`},
		{`{"args":{}}`, `line 3: missing "tool"`},
		{`{"tool":7}`, `line 3: "tool": a number where a string belongs`},
		{`{"batch":{}}`, `line 3: "batch": an object where an array belongs`},
		{`{"tool":"list","cancel":"yes"}`, `line 3: "cancel": a string where true or false belongs`},
		{`{"tool":"list",}`, `line 3: invalid JSON at byte 16: invalid character '}' looking for beginning of object key string`},
		{"\uFEFF" + `{"tool":"list"}`, "line 3: expected a JSON object"}, // a byte order mark only starts a file
		{`{"batch":[]}`, "line 3: empty batch"},
		{`{"batch":[{"tool":"list"},{"args":{}}]}`, `line 3: batch call 2: missing "tool"`},
		{`{"batch":[{"tool":"list","cancel":true}]}`, `line 3: batch call 1: "cancel" belongs to the batch`},
		{`{"batch":[{"tool":"list"}],"session":"x"}`, `line 3: a batch line takes only "batch" and "cancel"`},
		{`{"batch":[{"tool":"list","batch":[]}]}`, `line 3: unknown field "batch"`},
	} {
		t.Run(tc.line, func(t *testing.T) {
			ws := replayWorkspace(t)
			input := `{"tool":"list"}` + "\n\n" + tc.line + "\n" + `{"tool":"list"}` + "\n"
			code, stdout, stderr := replay(t, input, "--workspace", ws)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.HasPrefix(stderr, "demo replay: "+tc.want) {
				t.Errorf("stderr = %q, want it to start with %q", stderr, "demo replay: "+tc.want)
			}
			wantReplayLines(t, stdout, ws, `{"tool":"list","session":"main",`+listWorkspace)
		})
	}
}

func TestReplayUsage(t *testing.T) {
	ws := replayWorkspace(t)
	t.Run("help", func(t *testing.T) {
		code, stdout, stderr := replay(t, "", "--help")
		if code != 0 || stderr != "" {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		for _, s := range []string{"usage: demo replay [flags] [FILE]\n\nRuns tool calls without a model", `{"batch": [call, ...], "cancel": false}`, `"error": {"message": ..., "name": ..., "code": ...}`,
			"-no-policy", "-workspace DIR", "-unconfined", "-root DIR", "-read-only-root DIR", "(repeatable; a relative DIR resolves against the workspace)"} {
			if !strings.Contains(stdout, s) {
				t.Errorf("help lacks %q:\n%s", s, stdout)
			}
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown flag", []string{"--model", "x"}, 2, "demo replay: flag provided but not defined: -model (see demo replay --help)\n"},
		{"two files", []string{"a", "b"}, 2, "demo replay: at most one FILE, got 2 (see demo replay --help)\n"},
		{"missing file", []string{"--workspace", ws, filepath.Join(ws, "nope.jsonl")}, 2, "demo replay: open " + filepath.Join(ws, "nope.jsonl")},
		{"missing workspace", []string{"--workspace", filepath.Join(ws, "nope")}, 1, "demo replay: gordis: workspace: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := replay(t, `{"tool":"list"}`, tc.args...)
			if code != tc.code || stdout != "" {
				t.Errorf("exit %d, stdout %q; want %d and nothing", code, stdout, tc.code)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr = %q, want %q", stderr, tc.want)
			}
		})
	}
}

// A UTF-8 byte order mark, as some editors write, starts the first line.
func TestReplayByteOrderMark(t *testing.T) {
	ws := replayWorkspace(t)
	code, stdout, stderr := replay(t, "\uFEFF"+`{"tool":"list"}`+"\n", "--workspace", ws)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	wantReplayLines(t, stdout, ws, `{"tool":"list","session":"main",`+listWorkspace)
}

// The value of an edit of a large file is cut, its text is not.
func TestReplayBoundsValue(t *testing.T) {
	ws := t.TempDir()
	// 6002 bytes; byte 4096 is inside an "é", so the cut falls before it.
	big := "a" + strings.Repeat("é", 3000) + "\n"
	if err := os.WriteFile(filepath.Join(ws, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := replay(t, `{"tool":"edit","args":{"file_path":"big.txt","old_string":"a","new_string":"b"}}`, "--no-policy", "--workspace", ws)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var got struct {
		Text  string
		Value struct{ Before, After string }
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	kept := strings.Repeat("é", 2047) + "… (1907 more bytes)"
	if got.Value.Before != "a"+kept || got.Value.After != "b"+kept {
		t.Errorf("value ends %q and %q, want both to end %q", got.Value.Before[4000:], got.Value.After[4000:], kept[3999:])
	}
	if want := "The file " + ws + "/big.txt has been updated successfully."; got.Text != want {
		t.Errorf("text %q, want %q", got.Text, want)
	}
}

// A value encoding/json cannot encode is reported without its Go type.
func TestValueWithoutJSONForm(t *testing.T) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	call := &registry.Call{Session: &replaySession{name: "main"}}
	if err := encodeResult(enc, call, &registry.Result{Tool: "t", Value: struct{ F func() }{}}); err != errNoJSON {
		t.Fatalf("error %v, want %v", err, errNoJSON)
	}
	if err := encodeResult(enc, call, &registry.Result{Tool: "t", Value: map[string]string{"a": "<b>"}}); err != nil {
		t.Fatal(err)
	}
	if want := `{"tool":"t","session":"main","isError":false,"text":"","value":{"a":"<b>"}}` + "\n"; buf.String() != want {
		t.Errorf("encoded %s, want %s", buf.String(), want)
	}
}

func TestBoundStrings(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":"abc","b":[1,"de"]}`, `{"a":"abc","b":[1,"de"]}`},
		{`"abcdef"`, `"abcd… (2 more bytes)"`},
		{`"abcd"`, `"abcd"`},
		{`{"abcdef":"x"}`, `{"abcd… (2 more bytes)":"x"}`},   // keys are strings too
		{`["\"\\\n\"x"]`, `["\"\\\n\"… (1 more bytes)"]`},    // escapes count as what they stand for
		{`["\u00e9\u00e9\u00e9"]`, `["éé… (2 more bytes)"]`}, // the cut never splits a character
		{`["ab\u003cc"]`, `["ab\u003cc"]`},                   // a long literal of a short string is kept as it is
	} {
		got, err := boundStrings([]byte(tc.in), 4)
		if err != nil || string(got) != tc.want {
			t.Errorf("boundStrings(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

// FuzzReplayParse: any line either parses into named calls, each with a
// session, or is a line error naming its line number; it never panics.
func FuzzReplayParse(f *testing.F) {
	for _, seed := range []string{
		`{"tool":"read","args":{"file_path":"a.txt"},"session":"s","cancel":true}`,
		`{"batch":[{"tool":"list"},{"tool":"read","session":"x"}],"cancel":false}`,
		`{"batch":[]}`, `{"tool":""}`, `{"args":null}`, `[]`, `{`, `{"tool":"a"} x`, `{"tool":"a","extra":1}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.TrimSpace(line) == "" {
			t.Skip() // blank lines never reach parse
		}
		r := &replayer{sessions: map[string]*replaySession{}}
		s, err := r.parse(7, []byte(line))
		if err != nil {
			if le, ok := err.(*lineError); !ok || !strings.HasPrefix(le.Error(), "line 7: ") {
				t.Fatalf("error %v is not a line error", err)
			}
			return
		}
		if len(s.calls) == 0 || (!s.batch && len(s.calls) != 1) {
			t.Fatalf("%q: %d calls, batch %v", line, len(s.calls), s.batch)
		}
		for _, c := range s.calls {
			if c.Tool == "" || c.Session == nil || c.Session.ID() == "" || c.ID == "" {
				t.Fatalf("%q: incomplete call %+v", line, c)
			}
		}
	})
}

// A relative --read-only-root resolves against --workspace, as the
// library's Roots do, not against the process's directory: from a cwd that
// holds a vendor directory of its own, WS/vendor is the one made read-only.
func TestReplayRelativeRoot(t *testing.T) {
	ws := replayWorkspace(t)
	elsewhere := t.TempDir()
	for _, dir := range []string{ws, elsewhere} {
		if err := os.MkdirAll(filepath.Join(dir, "vendor"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "vendor", "lib.go"), []byte("package lib\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(elsewhere)
	input := strings.Join([]string{
		`{"tool":"read","args":{"file_path":"vendor/lib.go"}}`,
		`{"tool":"write","args":{"file_path":"vendor/new.go","content":"package lib\n"}}`,
		`{"tool":"write","args":{"file_path":"b.txt","content":"two\n"}}`,
	}, "\n")
	code, stdout, stderr := replay(t, input, "--workspace", ws, "--read-only-root", "vendor")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	wantReplayLines(t, stdout, ws,
		`{"tool":"read","session":"main","isError":false,"text":"<path>$WS/vendor/lib.go</path>\n<type>file</type>\n<content>\n1: package lib\n\n(End of file - total 1 lines)\n</content>","value":{"path":"$WS/vendor/lib.go","offset":1,"lines":[{"number":1,"text":"package lib"}],"totalLines":1}}`,
		`{"tool":"write","session":"main","isError":true,"text":"Error: cannot write \"$WS/vendor/new.go\": the root \"$WS/vendor\" is read-only","error":{"message":"cannot write \"$WS/vendor/new.go\": the root \"$WS/vendor\" is read-only","name":"FsError","code":"FS_SANDBOX_DENIED"}}`,
		`{"tool":"write","session":"main","isError":false,"text":"<path>$WS/b.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>","value":{"path":"$WS/b.txt","operation":"create","before":null,"after":"two\n"}}`,
	)
	for _, dir := range []string{ws, elsewhere} {
		if _, err := os.Stat(filepath.Join(dir, "vendor", "new.go")); err == nil {
			t.Errorf("%s/vendor/new.go was created", dir)
		}
	}
}

// refCall and refLine read a line the way replay did before it split lines
// itself: encoding/json into tagged fields.
type refCall struct {
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args"`
	Session string          `json:"session"`
	Cancel  bool            `json:"cancel"`
}

type refLine struct {
	refCall
	Batch []refCall `json:"batch"`
}

// FuzzDecodeLine is differential: decodeLine reads a line as encoding/json
// reads it into tagged fields, values and error words alike, except where
// it is exact (a key that differs from a member name only in case is
// unknown) or the reference reuses what an earlier "batch" decoded.
func FuzzDecodeLine(f *testing.F) {
	for _, seed := range []string{
		`{"tool":"read","args":{"file_path":"a.txt"},"session":"s","cancel":true}`,
		`{"batch":[{"tool":"list"},null,{"tool":"read","args":null,"session":"x"}],"cancel":false}`,
		`{"batch":[]}`, `{"batch":null,"tool":"a"}`, `{"tool":7}`, `{"batch":{}}`, `{"batch":[5]}`, `{"tool":"a","tool":null}`,
		`{"tool":"a","x":1,"cancel":"no"}`, `{"batch":[{"tool":1,"y":2}]}`, `{"Tool":"a"}`, `{"tool":"list",}`, `{"tool":"a"} x`, `{`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if strings.TrimSpace(text) == "" || strings.Count(text, `"batch"`) > 1 {
			t.Skip() // blank lines never reach decodeLine; see above for batch
		}
		dec := json.NewDecoder(strings.NewReader(text))
		var keys []string
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			if k, ok := tok.(string); ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			for _, name := range []string{"tool", "args", "session", "cancel", "batch"} {
				if k != name && strings.EqualFold(k, name) {
					t.Skip()
				}
			}
		}
		line, batch, err := decodeLine([]byte(text))

		var ref refLine
		var refErr error
		if strings.TrimSpace(text)[0] != '{' {
			refErr = errors.New("expected a JSON object")
		} else {
			dec := json.NewDecoder(strings.NewReader(text))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&ref); err != nil {
				refErr = errors.New(syntaxOrProblem(text, err))
			} else if _, err := dec.Token(); err != io.EOF {
				refErr = errors.New("unexpected data after the JSON object")
			}
		}
		if (err == nil) != (refErr == nil) || err != nil && err.Error() != refErr.Error() {
			t.Fatalf("%q: error %v, want %v", text, err, refErr)
		}
		if err != nil {
			return
		}
		same := func(c replayCall, r refCall) bool {
			return c.Tool == r.Tool && string(c.Args) == string(r.Args) && (c.Args == nil) == (r.Args == nil) && c.Session == r.Session && c.Cancel == r.Cancel
		}
		if !same(line, ref.refCall) || (batch == nil) != (ref.Batch == nil) || len(batch) != len(ref.Batch) {
			t.Fatalf("%q: %+v %+v, want %+v", text, line, batch, ref)
		}
		for i := range batch {
			if !same(batch[i], ref.Batch[i]) {
				t.Fatalf("%q: batch call %d %+v, want %+v", text, i+1, batch[i], ref.Batch[i])
			}
		}
	})
}

// syntaxOrProblem words the reference's error as replay does.
func syntaxOrProblem(text string, err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Sprintf("invalid JSON at byte %d: the line ends before the JSON object does", len(strings.TrimRight(text, " \t\r")))
	}
	return jsonProblem(err)
}
