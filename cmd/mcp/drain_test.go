package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis/internal/mcptest"
)

// TestDrain: on SIGTERM /readyz turns 503 at once and a new session is
// refused, while a call already in flight is answered; then the command
// exits 0. The call is kept in flight by sending its body in two parts,
// around the signal.
func TestDrain(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, url, log, _ := startHTTP(t, "--workspace", ws, "--drain-timeout", "20s")
	answer, rest, _ := slowCall(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read","arguments":{"file_path":"a.txt"}}}`)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(url, "/mcp")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if code, body := request(t, http.MethodGet, base+"/readyz", nil, ""); code == http.StatusServiceUnavailable && body == "draining\n" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("/readyz after SIGTERM: %d %q, want 503 \"draining\\n\"\n%s", code, body, log.String())
		}
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"v0"}}}`
	if code, body := request(t, http.MethodPost, url, nil, initialize); code != http.StatusServiceUnavailable || body != "the server is shutting down: open the session elsewhere\n" {
		t.Errorf("a new session during the drain: %d %q, want 503", code, body)
	}
	rest()
	if a := <-answer; a.err != nil || a.code != http.StatusOK || !strings.Contains(a.body, "1: alpha") {
		t.Errorf("the call in flight: %d %q %v, want 200 and the file", a.code, a.body, a.err)
	}
	if err := waitExit(t, cmd, 10*time.Second); err != nil {
		t.Fatalf("exit: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "msg=drained") {
		t.Errorf("no drained line:\n%s", log.String())
	}
}

// TestDrainSecondSignal: a second SIGTERM cuts the drain short: the command
// exits at once, not after --drain-timeout.
func TestDrainSecondSignal(t *testing.T) {
	cmd, url, log, _ := startHTTP(t, "--workspace", t.TempDir(), "--drain-timeout", "1m")
	answer, _, cut := slowCall(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list","arguments":{}}}`)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitLog(t, log, `msg="draining:`)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(t, cmd, 10*time.Second); err != nil {
		t.Fatalf("exit: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "drain cut short") {
		t.Errorf("no line saying the drain was cut short:\n%s", log.String())
	}
	cut()
	if a := <-answer; a.err == nil && a.code == http.StatusOK {
		t.Errorf("the cut call was answered: %q", a.body)
	}
}

type answer struct {
	code int
	body string
	err  error
}

// slowCall opens a session on url and starts the JSON-RPC request msg in
// it, sending the first half of its body only: the request is in flight
// until rest sends the other half, or cut ends the body short.
func slowCall(t *testing.T, url, msg string) (answers <-chan answer, rest, cut func()) {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: withToken(testToken), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, send := io.Pipe()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	setHeaders(req, map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": cs.InitializeResult().ProtocolVersion})
	answered := make(chan answer, 1)
	go func() { answered <- do(req) }()
	cut = func() { send.CloseWithError(errors.New("the body was cut")) }
	t.Cleanup(cut)
	if _, err := io.WriteString(send, msg[:len(msg)/2]); err != nil {
		t.Fatal(err)
	}
	// The server has the request once it has its header, which is sent
	// before the body: on loopback, long before this.
	time.Sleep(300 * time.Millisecond)
	return answered, func() {
		io.WriteString(send, msg[len(msg)/2:])
		send.Close()
	}, cut
}

// request sends body (none if "") to url with the test token and the
// headers of an MCP client, and returns the status and the answer.
func request(t *testing.T, method, url string, header map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	setHeaders(req, header)
	a := do(req)
	if a.err != nil {
		t.Fatal(a.err)
	}
	return a.code, a.body
}

// do sends req and reads the whole answer.
func do(req *http.Request) answer {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, string(body), err}
}

func setHeaders(req *http.Request, header map[string]string) {
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
}

// waitExit waits up to d for cmd to exit and returns its error.
func waitExit(t *testing.T, cmd interface{ Wait() error }, d time.Duration) error {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		return err
	case <-time.After(d):
		return fmt.Errorf("still running after %v", d)
	}
}

// waitLog waits until the log holds want.
func waitLog(t *testing.T, log *mcptest.Buffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(log.String(), want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log lacks %q:\n%s", want, log.String())
		}
	}
}
