package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/toolfs"
	"github.com/gordis-run/gordis/registry"
)

func runDemoT(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("DEEPSEEK_API_KEY", "")
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestDemoWithoutKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	code, out, errOut := runDemoT(t, "--workspace", dir)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	want := []string{
		"mode: scripted model (no DEEPSEEK_API_KEY)",
		"turn 1 ▶ user: Please mark notes.md as reviewed.",
		"  step 1 → list {\"path\": \".\"}\n           ✓ .: 4 entries (2 directories, 2 files)\n",
		"  step 2 → read {\"file_path\": \"notes.md\"}\n           ✓ notes.md: lines 1-2 of 2\n",
		"  step 3 → edit {\"file_path\": \"notes.md\", \"old_string\": \"status: draft\", \"new_string\": \"status: reviewed\"}\n" +
			"           ✓ edited notes.md\n" +
			"             --- notes.md\n             +++ notes.md\n             @@ -1,2 +1,2 @@\n              # Notes\n             -status: draft\n             +status: reviewed\n",
		"  step 4 → read {\"file_path\": \"notes.md\"}\n           ✓ notes.md: lines 1-2 of 2\n",
		"  step 5 ◀ Updated notes.md: status is now reviewed.\n",
		"turn 1 ■ completed: 5 steps in ",
	}
	last := 0
	for _, w := range want {
		i := strings.Index(out[last:], w)
		if i < 0 {
			t.Fatalf("transcript lacks (in order) %q\n%s", w, out)
		}
		last += i + len(w)
	}
	if !strings.HasPrefix(out, "mode: ") {
		t.Errorf("the mode line is not first:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.md")); string(b) != "# Notes\nstatus: reviewed\n" {
		t.Errorf("notes.md = %q", b)
	}
}

func TestDemoTempWorkspaceIsRemoved(t *testing.T) {
	code, out, errOut := runDemoT(t)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	line := strings.SplitN(out, "\n", 3)[1]
	dir := strings.TrimPrefix(line, "workspace: ")
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("temporary workspace %q left behind: %v", dir, err)
	}
}

// A workspace whose notes.md is not a draft: the sample never overwrites
// it, the scripted model's check fails, and the demo exits 1 saying why.
func TestDemoFailsClearly(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# Notes\nstatus: final\n"), 0o644)
	code, out, errOut := runDemoT(t, "--workspace", dir)
	if code != 1 || !strings.Contains(errOut, `do not contain "status: draft"`) || !strings.Contains(out, "■ error") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.md")); string(b) != "# Notes\nstatus: final\n" {
		t.Errorf("notes.md was overwritten: %q", b)
	}
}

func TestDemoMaxSteps(t *testing.T) {
	code, out, errOut := runDemoT(t, "--max-steps", "2")
	if code != 1 || !strings.Contains(out, "■ max-steps: 2 steps") || !strings.Contains(errOut, "stopped after 2 steps") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

func TestDemoTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	if code, _, errOut := runDemoT(t, "--trace", path); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line traceLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Time == "" {
			t.Fatalf("bad line %s: %v", sc.Bytes(), err)
		}
		seen[line.Event]++
	}
	for event, n := range map[string]int{
		"agent/turn-start": 1, "agent/step-start": 5, "agent/tool-call": 4, "agent/tool-result": 4,
		"agent/turn-end": 1, "tools/result": 4, "fs/observed": 3,
	} {
		if seen[event] != n {
			t.Errorf("%s: %d lines, want %d (all: %v)", event, seen[event], n, seen)
		}
	}
}

func TestTools(t *testing.T) {
	code, out, errOut := runDemoT(t, "tools")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var tools []struct {
		Type     string
		Function struct {
			Name       string
			Parameters struct{ Type string }
		}
	}
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var names []string
	for _, tool := range tools {
		if tool.Type != "function" || tool.Function.Parameters.Type != "object" {
			t.Errorf("tool %+v", tool)
		}
		names = append(names, tool.Function.Name)
	}
	// the four tools in registration order.
	if strings.Join(names, ",") != "list,read,write,edit" {
		t.Fatalf("tools %v", names)
	}
}

func TestPrompt(t *testing.T) {
	code, out, errOut := runDemoT(t, "prompt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// the four tool sections, in order, after the demo's own.
	last := 0
	for _, w := range []string{"You are a careful coding agent.", "Use the list tool", "Use the read tool", "Use the write tool", "Use the edit tool"} {
		i := strings.Index(out[last:], w)
		if i < 0 {
			t.Fatalf("prompt lacks (in order) %q:\n%s", w, out)
		}
		last += i
	}
}

func TestHelpAndUsageErrors(t *testing.T) {
	code, out, _ := runDemoT(t, "--help")
	for _, w := range []string{"DEEPSEEK_API_KEY", "DEEPSEEK_MODEL", "DEEPSEEK_BASE_URL", "demo tools", "demo prompt", "demo replay", "-workspace", "-trace", "-prompt", "-offline", "-max-steps", "-script"} {
		if !strings.Contains(out, w) {
			t.Errorf("--help lacks %q", w)
		}
	}
	if code != 0 {
		t.Errorf("--help exit %d", code)
	}
	for _, args := range [][]string{{"--bogus"}, {"extra"}, {"--max-steps", "0"}, {"tools", "extra"}, {"prompt", "--trace", "x"}} {
		if code, out, errOut := runDemoT(t, args...); code != 2 || errOut == "" || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q (a usage error belongs on stderr alone)", args, code, out, errOut)
		}
	}
}

func TestDemoScriptFlag(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.json")
	os.WriteFile(script, []byte(`[{"calls":[{"name":"write","args":{"file_path":"new.txt","content":"hi\n"}}]},{"expect":"Created file","text":"Wrote new.txt."}]`), 0o644)
	code, out, errOut := runDemoT(t, "--workspace", dir, "--script", script)
	if code != 0 || !strings.Contains(out, "mode: scripted model (--script ") ||
		!strings.Contains(out, "✓ create new.txt\n             --- new.txt\n             +++ new.txt\n             @@ -0,0 +1 @@\n             +hi\n") ||
		!strings.Contains(out, "◀ Wrote new.txt.") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	os.WriteFile(script, []byte(`{}`), 0o644)
	if code, _, errOut := runDemoT(t, "--script", script); code != 1 || !strings.Contains(errOut, "non-empty JSON array") {
		t.Fatalf("bad script: exit %d, %s", code, errOut)
	}
}

func TestReplayIsDispatched(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"replay", "--workspace", t.TempDir()}, strings.NewReader(`{"tool":"list"}`+"\n"), &out, &errb)
	if code != 0 || !strings.Contains(out.String(), `"tool":"list"`) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
	}
}

// Streamed pieces: one line per kind, continuation lines indented, blank
// lines kept blank, trailing newlines dropped.
func TestTranscriptPieces(t *testing.T) {
	var b strings.Builder
	tr := newTranscript(&b, "/w")
	for _, p := range []struct {
		kind byte
		s    string
	}{{'r', "\nThinking"}, {'r', " hard\n\n"}, {'r', "more\n"}, {'t', "Done"}, {'t', ".\nBye\n"}} {
		mark := "∴"
		if p.kind == 't' {
			mark = "◀"
		}
		tr.piece(2, p.kind, mark, p.s)
	}
	tr.closeLine()
	want := "  step 2 ∴ Thinking hard\n\n           more\n  step 2 ◀ Done.\n           Bye\n"
	if b.String() != want {
		t.Fatalf("got\n%q\nwant\n%q", b.String(), want)
	}
}

// A change whose texts the provider omitted (a file too large to hold)
// says so instead of showing an empty or wrong diff.
func TestTranscriptOmittedDiff(t *testing.T) {
	var b strings.Builder
	tr := newTranscript(&b, "/w")
	tr.result(&registry.Result{Value: &toolfs.EditResult{Path: "/w/big.txt", Omitted: true}})
	tr.result(&registry.Result{Value: &toolfs.WriteResult{Path: "/w/big.txt", Operation: fs.OpUpdate, After: "x\n", Omitted: true}})
	want := indent + "✓ edited big.txt\n" + indent + "  (file too large to diff)\n" +
		indent + "✓ update big.txt\n" + indent + "  (file too large to diff)\n"
	if b.String() != want {
		t.Fatalf("got\n%q\nwant\n%q", b.String(), want)
	}
}
