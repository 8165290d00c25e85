package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// transport opens sessions to cmd/mcp and names the processes that serve
// them, whose memory and CPU a run counts.
type transport interface {
	connect(ctx context.Context) (*mcp.ClientSession, error)
	pids() []int
	// hangUp is told that every session is closed: the clients are gone.
	hangUp()
	// stop ends what the transport started.
	stop() error
}

var client = mcp.NewClient(&mcp.Implementation{Name: "gordis-load", Version: "v0"}, nil)

// httpServer is one cmd/mcp --http process serving every session.
type httpServer struct {
	cmd    *exec.Cmd
	url    string
	client *http.Client
	log    *lastLines
	exited chan error

	mu      sync.Mutex
	gcs     int   // collections so far
	gcAfter int64 // heap marked live by the last one, in bytes
}

var (
	_ transport = (*httpServer)(nil)
	_ gcTracer  = (*httpServer)(nil)
)

// gcTracer is a transport that knows its server's collections.
type gcTracer interface {
	// lastGC returns how many collections the server has made and the
	// heap the last one found live, in bytes.
	lastGC() (n int, live int64)
}

// gcTraced matches a line of GODEBUG=gctrace=1: the figures of "A->B->C MB"
// are the heap at the start and end of the collection and the heap marked
// live, in MiB (which the runtime calls MB).
var gcTraced = regexp.MustCompile(`^gc \d+ @.* (\d+)->(\d+)->(\d+) MB`)

func (s *httpServer) lastGC() (int, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gcs, s.gcAfter
}

// logged takes in a line of the server's stderr.
func (s *httpServer) logged(line string) {
	if m := gcTraced.FindStringSubmatch(line); m != nil {
		live, _ := strconv.ParseInt(m[3], 10, 64)
		s.mu.Lock()
		s.gcs++
		s.gcAfter = live << 20
		s.mu.Unlock()
		return
	}
	s.log.add(line)
}

// urlLogged finds the endpoint in cmd/mcp's start line, text or JSON.
var urlLogged = regexp.MustCompile(`"?url"?[=:]"?(https?://[^\s"]+)`)

// startHTTP starts cmd/mcp on a free loopback port with a fresh token. The
// rate limit is per token and every session here shares one, so it is
// lifted (--rate 0): left at 100 calls per second it would refuse most of
// the load. The runtime traces its collections (a line on stderr each,
// which costs nothing measurable), so that the heap left live after the
// sessions close is known, not guessed from the RSS.
func startHTTP(bin, ws, dir string, sessions int) (*httpServer, error) {
	token := rand.Text()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--workspace", ws, "--http", "127.0.0.1:0", "--token-file", tokenFile, "--rate", "0")
	cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &httpServer{cmd: cmd, log: &lastLines{max: 20}, exited: make(chan error, 1)}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for found := false; sc.Scan(); {
			s.logged(sc.Text())
			if m := urlLogged.FindStringSubmatch(sc.Text()); m != nil && !found {
				urls <- m[1]
				found = true
			}
		}
		s.exited <- cmd.Wait()
	}()
	select {
	case s.url = <-urls:
	case err := <-s.exited:
		return nil, fmt.Errorf("cmd/mcp --http exited at start (%v):\n%s", err, s.log)
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("cmd/mcp --http logged no URL in 30s:\n%s", s.log)
	}
	// Each session holds a connection for its event stream and reuses
	// another for its requests, as a client on its own machine would.
	conns := &http.Transport{MaxIdleConnsPerHost: 2*sessions + 2, IdleConnTimeout: time.Minute}
	s.client = &http.Client{Transport: bearer{"Bearer " + token, conns}}
	return s, nil
}

func (s *httpServer) connect(ctx context.Context) (*mcp.ClientSession, error) {
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: s.client, MaxRetries: -1}, nil)
}

func (s *httpServer) pids() []int { return []int{s.cmd.Process.Pid} }

// hangUp closes the clients' idle connections, as clients that went away
// would: only then is what the server holds for the sessions alone left.
func (s *httpServer) hangUp() { s.client.CloseIdleConnections() }

// stop drains the server with SIGTERM, as an operator would stop it, and
// kills it if it is not gone in 30 seconds.
func (s *httpServer) stop() error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-s.exited:
		if err != nil {
			return fmt.Errorf("cmd/mcp --http: %v:\n%s", err, s.log)
		}
		return nil
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		return fmt.Errorf("cmd/mcp --http still running 30s after SIGTERM:\n%s", s.log)
	}
}

// bearer sets the Authorization header of every request.
type bearer struct {
	header string
	next   http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", b.header)
	return b.next.RoundTrip(r)
}

// stdioServers starts one cmd/mcp on stdio per session, as a desktop
// client does.
type stdioServers struct {
	bin, ws string
	mu      sync.Mutex
	started []int
}

var _ transport = (*stdioServers)(nil)

func (s *stdioServers) connect(ctx context.Context) (*mcp.ClientSession, error) {
	cmd := exec.Command(s.bin, "--workspace", s.ws)
	cmd.Stderr = io.Discard
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.started = append(s.started, cmd.Process.Pid)
	s.mu.Unlock()
	return cs, nil
}

func (s *stdioServers) pids() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.started...)
}

// Closing a session ended its process: nothing is left to do.
func (s *stdioServers) hangUp()     {}
func (s *stdioServers) stop() error { return nil }

// lastLines keeps the last lines of a log, to show when something fails.
type lastLines struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (l *lastLines) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) == l.max {
		l.lines = l.lines[1:]
	}
	l.lines = append(l.lines, line)
}

func (l *lastLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
