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
	// stop ends what the transport started once its sessions are closed.
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
}

var _ transport = (*httpServer)(nil)

// urlLogged finds the endpoint in cmd/mcp's start line, text or JSON.
var urlLogged = regexp.MustCompile(`"?url"?[=:]"?(https?://[^\s"]+)`)

// startHTTP starts cmd/mcp on a free loopback port with a fresh token. The
// rate limit is per token and every session here shares one, so it is
// lifted (--rate 0): left at 100 calls per second it would refuse most of
// the load.
func startHTTP(bin, ws, dir string, sessions int) (*httpServer, error) {
	token := rand.Text()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--workspace", ws, "--http", "127.0.0.1:0", "--token-file", tokenFile, "--rate", "0")
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
			s.log.add(sc.Text())
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

// stop drains the server with SIGTERM, as an operator would stop it, and
// kills it if it is not gone in 30 seconds.
func (s *httpServer) stop() error {
	s.client.CloseIdleConnections()
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

// stop has nothing left to do: closing a session ends its process.
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
