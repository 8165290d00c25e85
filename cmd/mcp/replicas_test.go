package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis/internal/mcptest"
)

// haproxyConfig puts two replicas behind one address. A session is kept on
// the replica that opened it by a stick table keyed on the Mcp-Session-Id
// the replica assigns in its answer to initialize: hashing the header
// (balance hdr) cannot work, since initialize has none. /readyz takes a
// draining replica out of the rotation; a new session that reaches it
// before the check notices gets 503 and is retried on the other, and a
// request of a session whose replica is gone is redispatched there too,
// which answers 404, so that the client opens a new session. A check
// waits up to 2 s (a replica under load answers late) and a replica is out
// after two failed ones.
const haproxyConfig = `global
    maxconn 1000

defaults
    mode http
    timeout connect 2s
    timeout check 2s
    timeout client 10m
    timeout server 10m
    retries 3
    option redispatch 1

frontend mcp
    bind {{listen}}
    default_backend replicas

backend replicas
    balance roundrobin
    stick-table type string len 64 size 100k expire 30m
    stick match req.hdr(Mcp-Session-Id)
    stick store-response res.hdr(Mcp-Session-Id)
    retry-on 503 conn-failure empty-response
    option httpchk
    http-check send meth GET uri /readyz
    http-check expect status 200
    default-server check inter 250ms fall 2 rise 1
{{servers}}`

// TestReplicas: 50 sessions edit their own files through HAProxy in front
// of two replicas sharing a workspace, and one replica is drained mid-run.
// The sessions on the other one see no error; those on the drained one get
// their calls in flight answered, then a clean error, and go on in a new
// session; every file holds exactly the edits that were reported done.
func TestReplicas(t *testing.T) {
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy not installed: apt-get install haproxy (.ci/run does) to run the two-replica test")
	}
	const (
		sessions = 50
		run      = 10 * time.Second
		drainAt  = 3 * time.Second
	)
	ws := t.TempDir()
	for i := range sessions {
		if err := os.WriteFile(filepath.Join(ws, fileOf(i)), []byte("n=0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	replicas := map[string]*exec.Cmd{}
	logs := map[string]*mcptest.Buffer{}
	var servers strings.Builder
	for _, name := range []string{"r1", "r2"} {
		cmd, url, log, _ := startHTTP(t, "--workspace", ws, "--rate", "0", "--drain-timeout", "20s")
		replicas[name], logs[name] = cmd, log
		fmt.Fprintf(&servers, "    server %s %s\n", name, strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp"))
	}
	listen := freeAddr(t)
	config := filepath.Join(t.TempDir(), "haproxy.cfg")
	text := strings.NewReplacer("{{listen}}", listen, "{{servers}}", servers.String()).Replace(haproxyConfig)
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var hlog mcptest.Buffer
	proxy := exec.Command(haproxy, "-db", "-f", config)
	proxy.Stdout, proxy.Stderr = &hlog, &hlog
	if err := proxy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Process.Kill(); proxy.Wait() })
	endpoint := "http://" + listen + "/mcp"
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + listen + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("HAProxy does not answer on %s:\n%s", listen, hlog.String())
		}
	}

	transport := &http.Transport{MaxIdleConnsPerHost: 2 * sessions}
	ctx, cancel := context.WithTimeout(t.Context(), run)
	defer cancel()
	var (
		mu          sync.Mutex
		events      []loopEvent
		wg          sync.WaitGroup
		finalCounts [sessions]int
	)
	for i := range sessions {
		wg.Go(func() {
			finalCounts[i] = editLoop(ctx, t, endpoint, transport, fileOf(i), func(e loopEvent) {
				mu.Lock()
				events = append(events, e)
				mu.Unlock()
			})
		})
	}
	time.Sleep(drainAt)
	sigterm := time.Now()
	if err := replicas["r1"].Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(t, replicas["r1"], 30*time.Second); err != nil {
		t.Errorf("the drained replica: %v\n%s", err, logs["r1"].String())
	}
	exited := time.Now()
	wg.Wait()

	for i, want := range finalCounts {
		data, err := os.ReadFile(filepath.Join(ws, fileOf(i)))
		if err != nil || string(data) != fmt.Sprintf("n=%d\n", want) {
			t.Errorf("%s: %q, %v; want n=%d (the edits reported done)", fileOf(i), data, err, want)
		}
	}
	// Where each session was, from the replicas' own logs.
	owner := map[string]string{}
	for name, log := range logs {
		for _, m := range regexp.MustCompile(`msg="server session connected" plugin=mcpserver session_id=(\w+)`).FindAllStringSubmatch(log.String(), -1) {
			owner[m[1]] = name
		}
	}
	stats := map[string]*replicaStats{"r1": {}, "r2": {}}
	kinds := map[string]int{}
	for _, e := range events {
		s := stats[owner[e.session]]
		if s == nil {
			t.Errorf("session %s is in no replica's log", e.session)
			continue
		}
		switch {
		case e.opened:
			s.sessions++
		case e.err == nil:
			s.edits++
			if e.at.After(sigterm) {
				s.editsAfter++
			}
		default:
			s.errors++
			kinds[errorKind(e.err)]++
			if owner[e.session] != "r1" || e.at.Before(sigterm) {
				t.Errorf("session %s on %s failed %v after the SIGTERM: %v", e.session, owner[e.session], e.at.Sub(sigterm), e.err)
			}
		}
	}
	t.Logf("r1 drained and exited %v after the SIGTERM", exited.Sub(sigterm).Round(time.Millisecond))
	for _, name := range []string{"r1", "r2"} {
		s := stats[name]
		t.Logf("%s: %d sessions opened, %d read+edit rounds done (%d after the SIGTERM), %d failed", name, s.sessions, s.edits, s.editsAfter, s.errors)
	}
	t.Logf("failures, by kind: %v", kinds)
	if stats["r1"].sessions == 0 || stats["r1"].errors == 0 {
		t.Errorf("the drained replica had %d sessions and %d failures: the test drained nothing", stats["r1"].sessions, stats["r1"].errors)
	}
	if t.Failed() {
		t.Logf("r1:\n%s\nHAProxy:\n%s", logs["r1"].String(), hlog.String())
	}
}

type replicaStats struct{ sessions, edits, editsAfter, errors int }

func fileOf(i int) string { return fmt.Sprintf("f%02d.txt", i) }

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// loopEvent is what editLoop reports: a session opened, a read+edit round
// done, or one that failed, and when.
type loopEvent struct {
	session string
	at      time.Time
	opened  bool
	err     error
}

// editLoop reads file and increments its counter with edit until ctx ends,
// in one session after another: a call that fails ends its session and the
// loop opens a new one, which must read the file again before it edits.
// It returns the number of edits reported done.
func editLoop(ctx context.Context, t *testing.T, endpoint string, transport http.RoundTripper, file string, report func(loopEvent)) int {
	done := 0
	for ctx.Err() == nil {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{testToken, transport}}}, nil)
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("%s: a new session: %v", file, err)
			}
			return done
		}
		report(loopEvent{session: cs.ID(), at: time.Now(), opened: true})
		for ctx.Err() == nil {
			// Not ctx: a call cut by the end of the run could be done
			// on the server and not reported.
			err := incrementOnce(t.Context(), cs, file, done)
			report(loopEvent{session: cs.ID(), at: time.Now(), err: err})
			if err != nil {
				break
			}
			done++
		}
		cs.Close()
	}
	return done
}

var counterLine = regexp.MustCompile(`\n1: (n=\d+)\n`)

// incrementOnce reads file and edits n=done into n=done+1.
func incrementOnce(ctx context.Context, cs *mcp.ClientSession, file string, done int) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"file_path": file}})
	if err != nil {
		return err
	}
	read := res.Content[0].(*mcp.TextContent).Text
	if m := counterLine.FindStringSubmatch(read); res.IsError || m == nil || m[1] != fmt.Sprintf("n=%d", done) {
		return fmt.Errorf("read %s: %q, want n=%d", file, read, done)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "edit", Arguments: map[string]any{
		"file_path": file, "old_string": fmt.Sprintf("n=%d\n", done), "new_string": fmt.Sprintf("n=%d\n", done+1)}})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("edit %s: %q", file, res.Content[0].(*mcp.TextContent).Text)
	}
	return nil
}

// errorKind names an error for the tally: the SDK's ErrSessionMissing, or
// the error's text without its session ID.
func errorKind(err error) string {
	if errors.Is(err, mcp.ErrSessionMissing) {
		return "ErrSessionMissing"
	}
	return regexp.MustCompile(`session ID: \w+`).ReplaceAllString(err.Error(), "session ID: …")
}
