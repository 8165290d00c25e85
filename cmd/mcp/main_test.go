package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/internal/mcptest"
)

// binary is cmd/mcp built once for the tests that run it as a subprocess.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gordis-mcp-test")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "mcp")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic("building cmd/mcp: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func runInProcess(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, io.NopCloser(strings.NewReader("")), nopCloser{&out}, &errOut)
	return code, out.String(), errOut.String()
}

func TestHelp(t *testing.T) {
	code, stdout, stderr := runInProcess("--help")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"usage: mcp [--config FILE] [--workspace DIR] [--root DIR]... [--read-only-root DIR]...", "FS_SANDBOX_DENIED", "-http ADDR", "-config FILE", "SIGHUP reloads it", "-unconfined", "-no-policy", "-workspace DIR",
		"-root DIR", "-read-only-root DIR", "(a relative DIR resolves against the workspace,\nnot the current directory)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, stdout)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--bogus"}, 2, "mcp: flag provided but not defined: -bogus (see mcp --help)\n"},
		{[]string{"extra"}, 2, "mcp: unexpected argument \"extra\" (see mcp --help)\n"},
		{[]string{"--workspace", "/nonexistent/gordis"}, 1, "mcp: gordis: workspace: stat /nonexistent/gordis: no such file or directory\n"},
		{[]string{"--http", "0.0.0.0:8080", "--no-auth"}, 2, "mcp: --no-auth is refused on 0.0.0.0:8080: anyone who can reach it could use the tools; listen on a loopback address (127.0.0.1:PORT) or use a token (see mcp --help)\n"},
		{[]string{"--http", "example.com:8080", "--no-auth"}, 2, "mcp: --no-auth is refused on example.com:8080: anyone who can reach it could use the tools; listen on a loopback address (127.0.0.1:PORT) or use a token (see mcp --help)\n"},
		{[]string{"--http", "8080", "--tls-cert", "c.pem"}, 2, "mcp: --tls-cert and --tls-key go together (see mcp --help)\n"},
		{[]string{"--http", "8080", "--tls-key", "k.pem"}, 2, "mcp: --tls-cert and --tls-key go together (see mcp --help)\n"},
		{[]string{"--config", "gordis.yaml", "--no-policy"}, 2, "mcp: --no-policy and --config exclude each other: set disabled: true on the file's fspolicy entry (see mcp --help)\n"},
		{[]string{"--config", "/nonexistent/gordis.yaml"}, 1, "mcp: open /nonexistent/gordis.yaml: no such file or directory\n"},
		{[]string{"--no-auth"}, 2, "mcp: --token-file, --no-auth, --tls-cert, --tls-key and --metrics need --http (see mcp --help)\n"},
		{[]string{"--metrics", "9090"}, 2, "mcp: --token-file, --no-auth, --tls-cert, --tls-key and --metrics need --http (see mcp --help)\n"},
		{[]string{"--http", "8080", "--metrics", "a:b:c"}, 2, "mcp: --metrics \"a:b:c\": want PORT, :PORT or HOST:PORT (see mcp --help)\n"},
		{[]string{"--http", "80:80:80"}, 2, "mcp: --http \"80:80:80\": want PORT, :PORT or HOST:PORT (see mcp --help)\n"},
		{[]string{"--http", "host"}, 2, "mcp: --http \"host\": want PORT, :PORT or HOST:PORT (see mcp --help)\n"},
		{[]string{"--log-format", "xml"}, 2, "mcp: --log-format \"xml\": want text or json (see mcp --help)\n"},
		{[]string{"--max-message", "2TB"}, 2, "mcp: invalid value \"2TB\" for flag -max-message: want a positive number of bytes, with KiB, MiB or GiB as a suffix if you like (see mcp --help)\n"},
		{[]string{"--http", "8080", "--token-file", "/nonexistent/token"}, 1, "mcp: --token-file: open /nonexistent/token: no such file or directory\n"},
	} {
		code, stdout, stderr := runInProcess(tc.args...)
		if code != tc.code || stdout != "" || stderr != tc.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d, stderr %q", tc.args, code, stdout, stderr, tc.code, tc.want)
		}
	}
}

// session runs the binary on stdio with args and connects the SDK client;
// wire receives the traffic as the client saw it, stderr the server's log.
func session(t *testing.T, wire, stderr *mcptest.Buffer, args ...string) *mcp.ClientSession {
	t.Helper()
	return connect(t, exec.Command(binary, args...), wire, stderr)
}

// connect starts cmd, the binary on stdio, and connects the SDK client, as
// session does.
func connect(t *testing.T, cmd *exec.Cmd, wire, stderr *mcptest.Buffer) *mcp.ClientSession {
	t.Helper()
	cmd.Stderr = stderr
	var transport mcp.Transport = &mcp.CommandTransport{Command: cmd}
	if wire != nil {
		transport = &mcp.LoggingTransport{Transport: transport, Writer: wire}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(), transport, nil)
	if err != nil {
		t.Fatalf("connecting: %v\nstderr:\n%s", err, stderr)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) (text string, isError bool, code string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content blocks", tool, len(res.Content))
	}
	if res.IsError {
		var sc struct{ Code string }
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &sc); err != nil {
			t.Fatalf("%s: structured content %s: %v", tool, b, err)
		}
		code = sc.Code
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError, code
}

// TestStdio drives the command as a client launches it: initialize,
// tools/list, then read, an edit after the read, a stale edit and a path
// outside the workspace.
func TestStdio(t *testing.T) {
	ws := t.TempDir()
	notes := filepath.Join(ws, "notes.md")
	if err := os.WriteFile(notes, []byte("status: draft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var wire, stderr mcptest.Buffer
	cs := session(t, &wire, &stderr, "--workspace", ws)

	if info := cs.InitializeResult().ServerInfo; info.Name != "gordis" {
		t.Errorf("server info %+v", info)
	}
	listed, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := definitions(t, ws)
	raw := mcptest.InputSchemas(t, wire.String())
	if len(listed.Tools) != len(want) {
		t.Fatalf("listed %d tools, want %d", len(listed.Tools), len(want))
	}
	for name, params := range want {
		if !bytes.Equal(raw[name], params) {
			t.Errorf("%s: inputSchema\n%s\nwant (as demo tools shows it)\n%s", name, raw[name], params)
		}
	}

	text, isError, _ := call(t, cs, "read", map[string]any{"file_path": "notes.md"})
	if isError || !strings.Contains(text, "1: status: draft") {
		t.Fatalf("read: %q", text)
	}
	if text, isError, _ := call(t, cs, "edit", map[string]any{"file_path": "notes.md", "old_string": "draft", "new_string": "reviewed"}); isError {
		t.Fatalf("edit after read: %q", text)
	}
	if err := os.WriteFile(notes, []byte("status: changed on disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text, isError, code := call(t, cs, "edit", map[string]any{"file_path": "notes.md", "old_string": "changed", "new_string": "x"})
	if !isError || code != "FS_STALE_VERSION" {
		t.Fatalf("stale edit: %v %q %q, want FS_STALE_VERSION", isError, code, text)
	}

	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text, isError, code = call(t, cs, "read", map[string]any{"file_path": outside})
	if want := `Error: cannot resolve "` + outside + `": outside the workspace "` + ws + `"`; !isError || code != "FS_SANDBOX_DENIED" || text != want {
		t.Fatalf("read outside the workspace: %v %q %q, want FS_SANDBOX_DENIED %q", isError, code, text, want)
	}
	if !strings.Contains(stderr.String(), "serving MCP on stdio") {
		t.Errorf("stderr lacks the startup log:\n%s", stderr.String())
	}
}

// definitions are the tool schemas the default deployment registers: what
// `demo tools` prints.
func definitions(t *testing.T, ws string) map[string]json.RawMessage {
	t.Helper()
	d, cleanup, err := gordis.Build(gordis.Options{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	out := map[string]json.RawMessage{}
	for _, def := range d.Tools.Definitions() {
		out[def.Name] = def.Parameters
	}
	return out
}

// TestNoPolicy: without the policy an edit needs no read.
func TestNoPolicy(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr mcptest.Buffer
	cs := session(t, nil, &stderr, "--workspace", ws, "--no-policy")
	if text, isError, _ := call(t, cs, "edit", map[string]any{"file_path": "a.txt", "old_string": "1", "new_string": "2"}); isError {
		t.Fatalf("edit without read under --no-policy: %q", text)
	}
}

// TestRoots: --root and --read-only-root are repeatable, and a relative
// DIR resolves against --workspace, as the library's Roots do, not against
// the process's directory (which here holds a vendor directory of its own).
func TestRoots(t *testing.T) {
	ws, elsewhere, shared := t.TempDir(), t.TempDir(), t.TempDir()
	for _, dir := range []string{filepath.Join(ws, "vendor"), filepath.Join(elsewhere, "vendor")} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "vendor", "lib.go"), []byte("package lib\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--workspace", ws, "--read-only-root", "vendor", "--root", shared)
	cmd.Dir = elsewhere
	var stderr mcptest.Buffer
	cs := connect(t, cmd, nil, &stderr)

	vendor := filepath.Join(ws, "vendor")
	if text, isError, _ := call(t, cs, "read", map[string]any{"file_path": "vendor/lib.go"}); isError || !strings.Contains(text, "1: package lib") {
		t.Fatalf("read under the read-only root: %q", text)
	}
	text, isError, code := call(t, cs, "write", map[string]any{"file_path": "vendor/new.go", "content": "package lib\n"})
	if want := `Error: cannot write "` + vendor + `/new.go": the root "` + vendor + `" is read-only`; !isError || code != "FS_SANDBOX_DENIED" || text != want {
		t.Fatalf("write under the read-only root: %v %q %q, want FS_SANDBOX_DENIED %q", isError, code, text, want)
	}
	for _, dir := range []string{ws, elsewhere} {
		if _, err := os.Stat(filepath.Join(dir, "vendor", "new.go")); err == nil {
			t.Errorf("%s/vendor/new.go was created", dir)
		}
	}
	if text, isError, _ := call(t, cs, "write", map[string]any{"file_path": filepath.Join(shared, "b.txt"), "content": "two\n"}); isError {
		t.Fatalf("write under --root: %q", text)
	}
	if got, err := os.ReadFile(filepath.Join(shared, "b.txt")); err != nil || string(got) != "two\n" {
		t.Errorf("%s/b.txt: %q, %v", shared, got, err)
	}
}

// TestHTTP serves the streamable transport on a free port and stops on
// SIGINT with exit status 0.
func TestHTTP(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, url, log, stdout := startHTTP(t, "--workspace", ws)
	if !strings.HasSuffix(url, "/mcp") || !strings.Contains(log.String(), `token=$GORDIS_MCP_TOKEN`) || strings.Contains(log.String(), testToken) {
		t.Errorf("start line: want the /mcp URL and where the token is, never the token:\n%s", log.String())
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: withToken(testToken)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if text, isError, _ := call(t, cs, "read", map[string]any{"file_path": "a.txt"}); isError || !strings.Contains(text, "1: alpha") {
		t.Fatalf("read over HTTP: %q", text)
	}
	cs.Close()
	for path, want := range map[string]string{"/healthz": "ok\n", "/readyz": "ready\n"} {
		resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != want {
			t.Errorf("GET %s: %d %q, want 200 %q", path, resp.StatusCode, body, want)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(t, cmd, 20*time.Second); err != nil {
		t.Fatalf("exit after SIGINT: %v\n%s", err, log.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q, want nothing", stdout.String())
	}
}

// testToken is the bearer token startHTTP gives the command.
const testToken = "test-token-0123456789"

// startHTTP starts the command with --http on a free port, testToken in
// its environment unless the test set the variable, and returns it, the URL
// it logged, its log and its stdout.
func startHTTP(t *testing.T, args ...string) (*exec.Cmd, string, *mcptest.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(binary, append(args, "--http", "127.0.0.1:0")...)
	if _, set := os.LookupEnv(tokenEnv); !set {
		cmd.Env = append(os.Environ(), tokenEnv+"="+testToken)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := new(bytes.Buffer)
	cmd.Stdout = stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	urls := make(chan string, 1)
	log := new(mcptest.Buffer)
	go func() {
		sc := bufio.NewScanner(stderr)
		found := regexp.MustCompile(`url"?[=:]"?(https?://[^\s"]+)`)
		for sc.Scan() {
			log.Write([]byte(sc.Text() + "\n"))
			if m := found.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	select {
	case url := <-urls:
		return cmd, url, log, stdout
	case <-time.After(30 * time.Second):
		t.Fatalf("no URL logged:\n%s", log.String())
		return nil, "", nil, nil
	}
}

// A session that sends nothing for --session-timeout is closed, with its
// reads: a client that vanished does not hold the server's memory. One
// that keeps calling stays.
func TestHTTPIdleSession(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const timeout = 500 * time.Millisecond
	_, url, log, _ := startHTTP(t, "--workspace", ws, "--session-timeout", timeout.String())
	connect := func() *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
			Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: withToken(testToken), MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	busy, idle := connect(), connect()
	for _, cs := range []*mcp.ClientSession{busy, idle} {
		if text, isError, _ := call(t, cs, "read", map[string]any{"file_path": "a.txt"}); isError {
			t.Fatalf("read: %q", text)
		}
	}
	for range 6 {
		time.Sleep(timeout / 2)
		if text, isError, _ := call(t, busy, "read", map[string]any{"file_path": "a.txt"}); isError {
			t.Fatalf("a session in use was closed: %q\n%s", text, log.String())
		}
	}
	if _, err := idle.CallTool(t.Context(), &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"file_path": "a.txt"}}); err == nil {
		t.Fatalf("an idle session still answers after %v", 3*timeout)
	}
}

// TestStdioBadLine: a line that is not JSON is answered with a parse error
// and the server goes on serving; before, it exited with status 1.
func TestStdioBadLine(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--workspace", ws)
	var stderr mcptest.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	exchange := func(send string, wantPrefix string) string {
		t.Helper()
		if _, err := io.WriteString(stdin, send+"\n"); err != nil {
			t.Fatal(err)
		}
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("after %s: the server closed stdout; stderr:\n%s", send, stderr.String())
				}
				if strings.HasPrefix(line, wantPrefix) {
					return line
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("after %s: no line starting %s; stderr:\n%s", send, wantPrefix, stderr.String())
			}
		}
	}
	const parseError = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`
	if got := exchange("garbage", `{"jsonrpc":"2.0","id":null,`); got != parseError {
		t.Fatalf("got %s, want %s", got, parseError)
	}
	exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"v0"}}}`, `{"jsonrpc":"2.0","id":1,"result":`)
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if got := exchange("{not json", `{"jsonrpc":"2.0","id":null,`); got != parseError {
		t.Fatalf("got %s, want %s", got, parseError)
	}
	got := exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"file_path":"a.txt"}}}`, `{"jsonrpc":"2.0","id":2,`)
	if !strings.Contains(got, `1: alpha`) || strings.Contains(got, `"isError":true`) {
		t.Fatalf("read after the bad lines: %s", got)
	}
	stdin.Close()
	for range lines { // stdout is read to its end before Wait
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v; stderr:\n%s", err, stderr.String())
	}
}
