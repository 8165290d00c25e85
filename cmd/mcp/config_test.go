package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis/internal/mcptest"
)

// configFixture is a workspace holding five.txt (five one-digit lines) and
// the text of the repository's gordis.yaml.
func configFixture(t *testing.T) (ws string, base []byte) {
	t.Helper()
	ws = t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "five.txt"), []byte("1\n2\n3\n4\n5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base, err := os.ReadFile("../../gordis.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return ws, base
}

// TestConfigReload runs the server on the repository's gordis.yaml with
// readLimit lowered, over stdio: a save of the file with another readLimit,
// the next read obeys it, without a restart; a file that does not load
// changes nothing; SIGHUP reloads.
func TestConfigReload(t *testing.T) {
	ws, base := configFixture(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "gordis.yaml")
	// save writes the file as editors do: a new file renamed over the old.
	save := func(readLimit string) {
		t.Helper()
		text := strings.Replace(string(base), "readLimit: 2000 ", "readLimit: "+readLimit+" ", 1)
		if text == string(base) {
			t.Fatal("gordis.yaml has no readLimit: 2000")
		}
		tmp := filepath.Join(dir, ".gordis.yaml.tmp")
		if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, conf); err != nil {
			t.Fatal(err)
		}
	}
	save("2")
	var stderr mcptest.Buffer
	cmd := exec.Command(binary, "--config", conf, "--workspace", ws, "--log-level", "debug")
	cs := connect(t, cmd, nil, &stderr)

	// lines is the number of lines the next read shows, once it is want or
	// after 10 s.
	// A new readLimit restarts toolfs: a call that arrives while its tools
	// are away is refused (unknown tool over MCP), and the client retries.
	lines := func(want int) int {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"file_path": "five.txt"}})
			switch {
			case err != nil && !strings.Contains(err.Error(), `unknown tool "read"`):
				t.Fatalf("read: %v", err)
			case err == nil && res.IsError:
				t.Fatalf("read: %+v", res.Content)
			case err == nil:
				n := len(numbered.FindAllString(res.Content[0].(*mcp.TextContent).Text, -1))
				if n == want || time.Now().After(deadline) {
					return n
				}
			case time.Now().After(deadline):
				t.Fatalf("read still refused after 10 s: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if n := lines(2); n != 2 {
		t.Fatalf("read with readLimit 2 showed %d lines", n)
	}
	save("3")
	if n := lines(3); n != 3 {
		t.Fatalf("after saving readLimit 3 a read shows %d lines\nstderr:\n%s", n, stderr.String())
	}

	save("zero")
	waitFor(t, &stderr, "config reload failed")
	if n := lines(3); n != 3 {
		t.Errorf("after saving an invalid file a read shows %d lines, want the 3 of before", n)
	}
	if !strings.Contains(stderr.String(), `gordis.yaml:33:16: entry \"tools\" (toolfs): \"readLimit\" must be a positive integer`) {
		t.Errorf("the failed reload does not name the position and the entry:\n%s", stderr.String())
	}

	save("4")
	if n := lines(4); n != 4 {
		t.Fatalf("after saving readLimit 4 a read shows %d lines", n)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &stderr, "config reloaded on SIGHUP")
	if n := lines(4); n != 4 {
		t.Errorf("after SIGHUP a read shows %d lines, want 4", n)
	}
	if _, err := cs.ListTools(t.Context(), &mcp.ListToolsParams{}); err != nil {
		t.Errorf("tools/list after the reloads: %v", err)
	}
}

// numbered matches a line of a read's output.
var numbered = regexp.MustCompile(`(?m)^\d+: \d$`)

// waitFor waits up to 10 s for text in the server's stderr.
func waitFor(t *testing.T, stderr *mcptest.Buffer, text string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), text); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("stderr lacks %q after 10 s:\n%s", text, stderr.String())
		}
	}
}

// A save that changes the registry's maxParallel keeps the MCP session:
// the registry takes the new bound in place instead of restarting, which
// would restart every plugin that injects "tools", mcpserver included, and
// end the stdio session.
func TestConfigRegistryEditKeepsSession(t *testing.T) {
	ws, base := configFixture(t)
	conf := filepath.Join(t.TempDir(), "gordis.yaml")
	if err := os.WriteFile(conf, base, 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr mcptest.Buffer
	cmd := exec.Command(binary, "--config", conf, "--workspace", ws)
	cs := connect(t, cmd, nil, &stderr)
	edited := strings.Replace(string(base), "maxParallel: 10 ", "maxParallel: 3  ", 1)
	if edited == string(base) {
		t.Fatal("gordis.yaml has no maxParallel: 10")
	}
	if err := os.WriteFile(conf, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil { // applied by now, by the watcher or the signal
		t.Fatal(err)
	}
	waitFor(t, &stderr, "config reloaded on SIGHUP")
	if text, isError, _ := call(t, cs, "read", map[string]any{"file_path": "five.txt"}); isError || !strings.Contains(text, "5: 5") {
		t.Fatalf("read after the edit: %q\nstderr:\n%s", text, stderr.String())
	}
}
