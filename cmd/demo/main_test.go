package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/fslocal"
	"github.com/gordis-run/gordis/plugins/toolfs"
	"github.com/gordis-run/gordis/registry"
)

// TestMain runs main itself when the test binary is started with
// DEMO_ARGS set (the tests that need a real stdout re-execute it so).
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("DEMO_ARGS"); ok {
		os.Args = append([]string{"demo"}, strings.Fields(args)...)
		main()
	}
	os.Exit(m.Run())
}

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
		"  step 2 → grep {\"pattern\": \"status: draft\"}\n           ✓ Found 1 match\n",
		"  step 3 → read {\"file_path\": \"notes.md\"}\n           ✓ notes.md: lines 1-2 of 2\n",
		"  step 4 → edit {\"file_path\": \"notes.md\", \"old_string\": \"status: draft\", \"new_string\": \"status: reviewed\"}\n" +
			"           ✓ edited notes.md\n" +
			"             --- notes.md\n             +++ notes.md\n             @@ -1,2 +1,2 @@\n              # Notes\n             -status: draft\n             +status: reviewed\n",
		"  step 5 → read {\"file_path\": \"notes.md\"}\n           ✓ notes.md: lines 1-2 of 2\n",
		"  step 6 ◀ Updated notes.md: status is now reviewed.\n",
		"turn 1 ■ completed: 6 steps in ",
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
	dir, ok := strings.CutSuffix(strings.TrimPrefix(line, "workspace: "), " (temporary, removed when the demo ends)")
	if !ok || !filepath.IsAbs(dir) {
		t.Fatalf("the workspace line %q does not say it is temporary", line)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("temporary workspace %q left behind: %v", dir, err)
	}
}

// A workspace whose notes.md is not a draft: the sample never overwrites
// it, the grep for the draft status finds nothing, the scripted model's
// check fails, and the demo exits 1 saying why.
func TestDemoFailsClearly(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# Notes\nstatus: final\n"), 0o644)
	code, out, errOut := runDemoT(t, "--workspace", dir)
	if code != 1 || !strings.Contains(errOut, `do not contain "notes.md\nLine 2: status: draft"`) ||
		!strings.Contains(out, "✓ No matches found\n") || !strings.Contains(out, "■ error") {
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
		var doc any
		if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if k := badTraceKey(doc); k != "" {
			t.Errorf("%s: key %q is not camelCase: %s", line.Event, k, sc.Bytes())
		}
	}
	for event, n := range map[string]int{
		"agent/turn-start": 1, "agent/step-start": 6, "agent/tool-call": 5, "agent/tool-result": 5,
		"agent/turn-end": 1, "tools/result": 5, "fs/observed": 3,
	} {
		if seen[event] != n {
			t.Errorf("%s: %d lines, want %d (all: %v)", event, seen[event], n, seen)
		}
	}
}

// toolArgKeys are the tools' own argument names (snake_case, as the tool
// contract fixes them): the only keys of a trace not in camelCase.
var toolArgKeys = map[string]bool{"file_path": true, "old_string": true, "new_string": true, "replace_all": true}

// badTraceKey returns the first key of v, at any depth, that is neither
// camelCase nor a tool argument's name.
func badTraceKey(v any) string {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if !toolArgKeys[k] && (k == "" || k[0] < 'a' || k[0] > 'z' || strings.ContainsAny(k, "_- ")) {
				return k
			}
			if bad := badTraceKey(e); bad != "" {
				return bad
			}
		}
	case []any:
		for _, e := range v {
			if bad := badTraceKey(e); bad != "" {
				return bad
			}
		}
	}
	return ""
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
	// R-001 and S-001: the four fs tools in registration order, then glob
	// and grep.
	if strings.Join(names, ",") != "list,read,write,edit,glob,grep" {
		t.Fatalf("tools %v", names)
	}
}

func TestPrompt(t *testing.T) {
	code, out, errOut := runDemoT(t, "prompt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// R-005 and S-005: the six tool sections, in order, after the demo's own.
	last := 0
	for _, w := range []string{"You are a careful coding agent.", "Use the list tool", "Use the read tool", "Use the write tool", "Use the edit tool", "Use the glob tool", "Use the grep tool"} {
		i := strings.Index(out[last:], w)
		if i < 0 {
			t.Fatalf("prompt lacks (in order) %q:\n%s", w, out)
		}
		last += i
	}
}

func TestHelpAndUsageErrors(t *testing.T) {
	code, out, _ := runDemoT(t, "--help")
	for _, w := range []string{"DEEPSEEK_API_KEY", "DEEPSEEK_MODEL", "DEEPSEEK_BASE_URL", "demo tools", "demo prompt", "demo replay", "-workspace", "-trace", "-prompt", "-offline", "-max-steps", "-script", "-config", "demo config schema"} {
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
	for _, tc := range []struct{ script, want string }{
		{`{}`, "an object where an array belongs"},
		{`[{"calls":{}}]`, `"calls": an object where an array belongs`},
		{`[{"text":1}]`, `"text": a number where a string belongs`},
		{`[`, "invalid JSON at byte 1: unexpected end of JSON input"},
		{`[}`, "invalid JSON at byte 2: invalid character '}' looking for beginning of value"},
		{`[]`, "no steps"},
	} {
		os.WriteFile(script, []byte(tc.script), 0o644)
		want := "demo: script " + script + ": " + tc.want + " (want a non-empty JSON array of steps)\n"
		if code, _, errOut := runDemoT(t, "--script", script); code != 1 || errOut != want {
			t.Errorf("script %s: exit %d, stderr %q, want 1 and %q", tc.script, code, errOut, want)
		}
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

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"héllo", 2, "hé…"},
		{"日本語", 3, "日本語"},
		{"日本語!", 3, "日本語…"},
	} {
		if got := clip(tc.s, tc.n); got != tc.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

// Clipping the arguments of a large write costs what it shows, not a
// decoded copy of the whole content.
func TestClipLargeCostsWhatItShows(t *testing.T) {
	big := strings.Repeat("é", 8<<20) // 16 MiB
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	got := clip(big, 200)
	goruntime.ReadMemStats(&after)
	if got != strings.Repeat("é", 200)+"…" {
		t.Fatalf("clip = %q", got)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("clip allocated %d bytes", n)
	}
}

// A change whose texts the provider omitted (a file too large to hold)
// says so instead of showing an empty or wrong diff.
func TestTranscriptOmittedDiff(t *testing.T) {
	var b strings.Builder
	tr := newTranscript(&b, "/w")
	tr.result(&registry.Result{Value: &toolfs.EditResult{Path: "/w/big.txt", Omitted: true}})
	tr.result(&registry.Result{Value: &toolfs.WriteResult{Path: "/w/big.txt", Operation: fs.OpUpdate, After: "x\n", Omitted: true}})
	card := indent + "  --- big.txt\n" + indent + "  +++ big.txt\n" + indent + "  (too large to show a diff)\n"
	want := indent + "✓ edited big.txt\n" + card + indent + "✓ update big.txt\n" + card
	if b.String() != want {
		t.Fatalf("got\n%q\nwant\n%q", b.String(), want)
	}
}

// Each command's --help describes that command, on stdout; demo help
// COMMAND prints the same.
func TestCommandHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"usage: demo [flags]          run the agent", "demo help [COMMAND]", "Model:", "-max-steps N",
			"(a relative DIR resolves against the workspace, not the\ncurrent directory)"}},
		{[]string{"tools", "--help"}, []string{"usage: demo tools [flags]\n\nPrints the tool definitions", "-workspace DIR", "-unconfined", "-root DIR", "-read-only-root DIR"}},
		{[]string{"prompt", "-h"}, []string{"usage: demo prompt [flags]\n\nPrints the system prompt", "-workspace DIR", "-unconfined"}},
		{[]string{"replay", "--help"}, []string{"usage: demo replay [flags] [FILE]\n\nRuns tool calls without a model", "-no-policy"}},
	} {
		code, out, errOut := runDemoT(t, tc.args...)
		if code != 0 || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v lacks %q:\n%s", tc.args, w, out)
			}
		}
		if tc.args[0] == "tools" || tc.args[0] == "prompt" {
			if strings.Contains(out, "-max-steps") || strings.Contains(out, "Model:") {
				t.Errorf("%v describes demo, not its command:\n%s", tc.args, out)
			}
		}
		help := []string{"help"}
		if tc.args[0] != "--help" {
			help = append(help, tc.args[0])
		}
		if code, helpOut, _ := runDemoT(t, help...); code != 0 || helpOut != out {
			t.Errorf("%v: exit %d, and its output differs from %v", help, code, tc.args)
		}
	}
}

// A usage error is one line on stderr with the hint, and nothing on stdout.
func TestUsageErrorsOneLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "demo: flag provided but not defined: -bogus (see demo --help)\n"},
		{[]string{"extra"}, "demo: unexpected argument \"extra\" (see demo --help)\n"},
		{[]string{"--max-steps", "0"}, "demo: --max-steps must be at least 1 (see demo --help)\n"},
		{[]string{"--max-steps", "x"}, "demo: invalid value \"x\" for flag -max-steps: parse error (see demo --help)\n"},
		{[]string{"tools", "--bogus"}, "demo tools: flag provided but not defined: -bogus (see demo tools --help)\n"},
		{[]string{"tools", "extra"}, "demo tools: unexpected argument \"extra\" (see demo tools --help)\n"},
		{[]string{"prompt", "--trace", "x"}, "demo prompt: flag provided but not defined: -trace (see demo prompt --help)\n"},
		{[]string{"replay", "--bogus"}, "demo replay: flag provided but not defined: -bogus (see demo replay --help)\n"},
		{[]string{"help", "bogus"}, "demo help: unknown command \"bogus\" (commands: tools, prompt, replay, config)\n"},
		{[]string{"help", "tools", "prompt"}, "demo help: at most one COMMAND (see demo --help)\n"},
	} {
		if code, out, errOut := runDemoT(t, tc.args...); code != 2 || out != "" || errOut != tc.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2, nothing and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// The scripted model plays its own script: a --prompt for it is refused,
// with the reason, before anything runs.
func TestPromptNeedsKey(t *testing.T) {
	want := "demo: --prompt needs DEEPSEEK_API_KEY: the scripted model plays only its own script, on the prompt \"Please mark notes.md as reviewed.\" (see demo --help)\n"
	if code, out, errOut := runDemoT(t, "--prompt", "Summarise README.md"); code != 2 || out != "" || errOut != want {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2, nothing and %q", code, out, errOut, want)
	}
	t.Setenv("DEEPSEEK_API_KEY", "sk-test") // never used: --offline wins
	var out, errOut bytes.Buffer
	if code := run([]string{"--offline", "--prompt", "x"}, strings.NewReader(""), &out, &errOut); code != 2 || errOut.String() != want {
		t.Fatalf("--offline: exit %d, stderr %q", code, errOut.String())
	}
}

// A second run on the same workspace finds notes.md reviewed: the scripted
// model reads it and says there is nothing to change.
func TestDemoSecondRun(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runDemoT(t, "--workspace", dir); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, errOut)
	}
	code, out, errOut := runDemoT(t, "--workspace", dir)
	if code != 0 || errOut != "" {
		t.Fatalf("second run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, w := range []string{
		"mode: scripted model (no DEEPSEEK_API_KEY; notes.md is already reviewed, so the script only checks it), served in-process behind the DeepSeek adapter\n",
		"  step 1 → read {\"file_path\": \"notes.md\"}\n           ✓ notes.md: lines 1-2 of 2\n",
		"  step 2 ◀ notes.md is already marked as reviewed: nothing to change.\n",
		"turn 1 ■ completed: 2 steps in ",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("second run lacks %q:\n%s", w, out)
		}
	}
}

// A stdout closed before a command writes (head, a pager quit early):
// the process is not killed by SIGPIPE, stops quietly with status 0, as
// Unix tools do, and removes its temporary workspace.
func TestStdoutClosedEarly(t *testing.T) {
	ws := replayWorkspace(t)
	for _, tc := range []struct{ args, stdin string }{
		{"", ""},
		{"tools", ""},
		{"prompt", ""},
		{"replay --workspace " + ws, `{"tool":"list"}` + "\n" + `{"tool":"read","args":{"file_path":"a.txt"}}` + "\n"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			tmp := t.TempDir()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			defer w.Close()
			var errOut bytes.Buffer
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "DEMO_ARGS="+tc.args, "DEEPSEEK_API_KEY=", "TMPDIR="+tmp)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(tc.stdin), w, &errOut
			if err := cmd.Run(); err != nil || errOut.Len() > 0 {
				t.Errorf("exit %v, stderr %q; want status 0 and nothing", err, errOut.String())
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("left in TMPDIR: %v", left)
			}
		})
	}
}

// demo tools and demo prompt only print: they copy nothing into
// --workspace, and create no missing one.
func TestInspectWritesNothing(t *testing.T) {
	for _, what := range []string{"tools", "prompt"} {
		t.Run(what, func(t *testing.T) {
			ws := t.TempDir()
			code, out, errOut := runDemoT(t, what, "--workspace", ws)
			if code != 0 || out == "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if left, _ := os.ReadDir(ws); len(left) != 0 {
				t.Errorf("written into the workspace: %v", left)
			}
			missing := filepath.Join(ws, "missing")
			if code, _, _ := runDemoT(t, what, "--workspace", missing); code != 1 {
				t.Errorf("missing workspace: exit %d, want 1", code)
			}
			if _, err := os.Stat(missing); err == nil {
				t.Errorf("%s was created", missing)
			}
		})
	}
}

func TestConfinementFlags(t *testing.T) {
	var f demoFlags
	c := demoCommand(&f)
	if code, ok := c.parse([]string{"--root", "rel", "--read-only-root", "/ro", "--root", "/rw", "--unconfined", "--config", "g.yaml"}, &bytes.Buffer{}, &bytes.Buffer{}); !ok {
		t.Fatalf("parse: exit %d", code)
	}
	// A relative root goes to the library as given: it resolves against
	// the workspace there, not against the process's directory here.
	want := gordis.Options{Workspace: "w", Unconfined: true, Config: "g.yaml", Roots: []fslocal.Root{
		{Path: "rel"}, {Path: "/ro", ReadOnly: true}, {Path: "/rw"},
	}}
	if got := f.options(gordis.Options{Workspace: "w"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("options %+v, want %+v", got, want)
	}
}
