package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis/internal/mcptest"
)

// bearer adds a token to every request it passes to next.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func withToken(token string) *http.Client {
	return &http.Client{Transport: bearer{token, http.DefaultTransport}}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		"8080":           "127.0.0.1:8080",
		":8080":          "127.0.0.1:8080",
		"0.0.0.0:8080":   "0.0.0.0:8080",
		"localhost:0":    "localhost:0",
		"[::1]:8080":     "[::1]:8080",
		"10.0.0.7:8080":  "10.0.0.7:8080",
		"[::]:8080":      "[::]:8080",
		"127.0.0.1:8080": "127.0.0.1:8080",
	} {
		if got, err := listenAddr("--http", in); err != nil || got != want {
			t.Errorf("listenAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "host", "80:80:80", ":http", "70000", "::1"} {
		if got, err := listenAddr("--http", in); err == nil {
			t.Errorf("listenAddr(%q) = %q, want an error", in, got)
		}
	}
}

func TestPasteURL(t *testing.T) {
	named := func() (string, error) { return "build-7", nil }
	unnamed := func() (string, error) { return "", errors.New("no name") }
	for _, tc := range []struct {
		scheme, addr string
		hostname     func() (string, error)
		want         string
	}{
		{"http", "127.0.0.1:8080", named, "http://127.0.0.1:8080/mcp"},
		{"https", "0.0.0.0:8443", named, "https://build-7:8443/mcp"},
		{"http", "[::]:8080", named, "http://build-7:8080/mcp"},
		{"http", "[::1]:8080", named, "http://[::1]:8080/mcp"},
		{"http", "0.0.0.0:8080", unnamed, "http://0.0.0.0:8080/mcp"},
	} {
		addr, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := pasteURL(tc.scheme, addr, "/mcp", tc.hostname); got != tc.want {
			t.Errorf("pasteURL(%s, %s) = %s, want %s", tc.scheme, tc.addr, got, tc.want)
		}
	}
}

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{"localhost": true, "127.0.0.1": true, "127.1.2.3": true, "::1": true,
		"0.0.0.0": false, "::": false, "10.0.0.7": false, "example.com": false, "": false} {
		if got := loopback(host); got != want {
			t.Errorf("loopback(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestByteSize(t *testing.T) {
	for in, want := range map[string]byteSize{"1": 1, "80MiB": 80 << 20, "4KiB": 4 << 10, "2GiB": 2 << 30} {
		var b byteSize
		if err := b.Set(in); err != nil || b != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, b, err, want)
		}
		if got := b.String(); got != in {
			t.Errorf("String() of %q = %q", in, got)
		}
	}
	for _, in := range []string{"", "0", "-1", "1MB", "MiB", "1.5MiB", "9999999999GiB"} {
		var b byteSize
		if err := b.Set(in); err == nil {
			t.Errorf("Set(%q) = %d, want an error", in, b)
		}
	}
}

// TestHTTPGeneratedToken: without --token-file and GORDIS_MCP_TOKEN the
// command generates a token into a 0600 file under $XDG_STATE_HOME, logs
// the file and not the token, and wants it; a restart keeps it.
func TestHTTPGeneratedToken(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv(tokenEnv, "")
	path := filepath.Join(state, "gordis", "mcp-token")
	var first string
	for range 2 {
		cmd, url, log, _ := startHTTP(t, "--workspace", t.TempDir())
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		token := strings.TrimSpace(string(data))
		if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 || len(token) != 26 {
			t.Fatalf("token file %v %v, token of %d characters", info.Mode(), err, len(token))
		}
		if first == "" {
			first = token
		} else if token != first {
			t.Error("a restart changed the generated token")
		}
		if !strings.Contains(log.String(), "token="+path) || strings.Contains(log.String(), token) {
			t.Errorf("the log should name %s and not hold the token:\n%s", path, log.String())
		}
		if _, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
			Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil); err == nil {
			t.Error("connected without a token")
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
			Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: withToken(token), MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("with the generated token: %v", err)
		}
		cs.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// TestHTTPTokenFile: each line of --token-file is a token; --log-format
// json logs JSON, and --log-level debug a line per call, without the
// file's contents or the token.
func TestHTTPTokenFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte("alice-token\nbob-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("the secret contents\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, url, log, _ := startHTTP(t, "--workspace", ws, "--token-file", file, "--log-format", "json", "--log-level", "debug")
	if !regexp.MustCompile(`"token":"` + regexp.QuoteMeta(file) + `"`).MatchString(log.String()) {
		t.Errorf("the JSON start line lacks the token file:\n%s", log.String())
	}
	for _, token := range []string{"alice-token", "bob-token"} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
			Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: withToken(token), MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("%s: %v", token, err)
		}
		if text, isError, _ := call(t, cs, "read", map[string]any{"file_path": "a.txt"}); isError {
			t.Fatalf("read: %q", text)
		}
		cs.Close()
	}
	callLine := regexp.MustCompile(`\{"time":"[^"]+","level":"DEBUG","msg":"mcp: call","plugin":"mcpserver","call":"mcp-2","session":"\w+","tool":"read","code":"OK","duration":\d+\}`)
	for deadline := time.Now().Add(10 * time.Second); !callLine.MatchString(log.String()) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if !callLine.MatchString(log.String()) {
		t.Errorf("no debug line for the second call:\n%s", log.String())
	}
	for _, secret := range []string{"the secret contents", "alice-token", "bob-token"} {
		if strings.Contains(log.String(), secret) {
			t.Errorf("the log holds %q:\n%s", secret, log.String())
		}
	}
}

// TestMetrics: --metrics serves the metrics plugin's Prometheus text on a
// listener of its own, without a token: the calls, the bytes read, the
// session, and the Go runtime's collector.
func TestMetrics(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, url, log, _ := startHTTP(t, "--workspace", ws, "--metrics", "127.0.0.1:0")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: withToken(testToken), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call(t, cs, "read", map[string]any{"file_path": "a.txt"})
	metricsURL := regexp.MustCompile(`metrics=(http://\S+/metrics)`).FindStringSubmatch(log.String())
	if metricsURL == nil {
		t.Fatalf("no metrics URL logged:\n%s", log.String())
	}
	resp, err := http.Get(metricsURL[1])
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		"\ngordis_tool_calls_total{code=\"OK\",tool=\"read\"} 1\n",
		"\ngordis_tool_call_duration_seconds_count{tool=\"read\"} 1\n",
		"\ngordis_tool_read_bytes_total{tool=\"read\"} 6\n",
		"\ngordis_tool_calls_in_flight 0\n",
		"\ngordis_mcp_sessions 1\n",
		"\ngordis_auth_failures_total 0\n",
		"\ngordis_limit_refusals_total{limit=\"rate\"} 0\n",
		"\n# TYPE go_goroutines gauge\n",
	} {
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d, lacks %q:\n%s", metricsURL[1], resp.StatusCode, strings.TrimSpace(want), body)
		}
	}
}

// TestHTTPNoAuth: on loopback, --no-auth serves without a token and says
// so in the start line.
func TestHTTPNoAuth(t *testing.T) {
	_, url, log, _ := startHTTP(t, "--workspace", t.TempDir(), "--no-auth")
	if !strings.Contains(log.String(), " token=none ") {
		t.Errorf("the start line does not say there is no token:\n%s", log.String())
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("without a token under --no-auth: %v", err)
	}
	cs.Close()
}

// TestHTTPS: with --tls-cert and --tls-key the command serves HTTPS and
// logs an https URL.
func TestHTTPS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	pool := selfSigned(t, certFile, keyFile)
	_, url, log, _ := startHTTP(t, "--workspace", t.TempDir(), "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Fatalf("URL %s, want https:\n%s", url, log.String())
	}
	client := &http.Client{Transport: bearer{testToken, &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("over HTTPS: %v", err)
	}
	cs.Close()
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns a
// pool that trusts it.
func selfSigned(t *testing.T, certFile, keyFile string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "gordis test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for file, block := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

// TestStdioMessageLimit: a line over --max-message is answered with a
// JSON-RPC error carrying its id, and the server goes on.
func TestStdioMessageLimit(t *testing.T) {
	var stderr mcptest.Buffer
	cs := session(t, nil, &stderr, "--workspace", t.TempDir(), "--max-message", "4KiB")
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"file_path": "a.txt", "content": strings.Repeat("x", 4<<10)}})
	var jerr *jsonrpc.Error
	if !errors.As(err, &jerr) || jerr.Code != jsonrpc.CodeInvalidRequest || jerr.Message != "invalid request: the message is larger than 4096 bytes" {
		t.Fatalf("a write over the limit: %v", err)
	}
	if text, isError, _ := call(t, cs, "write", map[string]any{"file_path": "a.txt", "content": "small\n"}); isError {
		t.Fatalf("a write after the refusal: %q\n%s", text, stderr.String())
	}
}
