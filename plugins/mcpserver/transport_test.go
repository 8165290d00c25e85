package mcpserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis/plugins/mcpserver"
)

const (
	parseError     = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`
	invalidRequest = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`
	initialize     = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"v0"}}}`
	initialized    = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// rawClient speaks to a server line by line, as a client with bugs would.
type rawClient struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
}

// serveRaw runs the fixture's server on its IOTransport over pipes.
func serveRaw(t *testing.T, fx *fixture) (*rawClient, *mcp.ServerSession) {
	return serveRawLimited(t, fx, 0)
}

// serveRawLimited is serveRaw with a bound on a message's size.
func serveRawLimited(t *testing.T, fx *fixture, maxMessage int64) (*rawClient, *mcp.ServerSession) {
	t.Helper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ss, err := fx.server.MCP().Connect(t.Context(), fx.server.IOTransport(serverIn, serverOut, maxMessage), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := &rawClient{t: t, in: clientOut, lines: make(chan string)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(clientIn)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	return c, ss
}

func (c *rawClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// recv is the next line from the server, skipping notifications.
func (c *rawClient) recv() string {
	c.t.Helper()
	for {
		line := await(c.t, c.lines, "a line from the server")
		if line == "" { // the server writes no blank lines
			c.t.Fatal("the server closed its output")
		}
		if !strings.Contains(line, `"method":"notifications/`) {
			return line
		}
	}
}

// handshake initializes the session.
func (c *rawClient) handshake() {
	c.t.Helper()
	c.send(initialize)
	if got := c.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":1,"result":{`) {
		c.t.Fatalf("initialize: %s", got)
	}
	c.send(initialized)
}

// A line the SDK would end the session on is answered, and the session
// goes on: the calls after it work.
func TestIOTransportAnswersBadLines(t *testing.T) {
	fx := newFixture(t)
	fx.file(t, "a.txt", "alpha\n")
	c, _ := serveRaw(t, fx)
	bad := []struct{ line, want string }{
		{"garbage", parseError},
		{`{"jsonrpc":"2.0","id":2,"method":"ping"`, parseError}, // cut short
		{`{"a":1} {"b":2}`, parseError},                         // two values on a line
		{"\x00", parseError},
		{`{}`, invalidRequest},
		{`42`, invalidRequest},
		{`"ping"`, invalidRequest},
		{`[]`, invalidRequest},
		{`[1]`, invalidRequest},
		{`{"jsonrpc":"1.0","id":2,"method":"ping"}`, invalidRequest},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, invalidRequest},
	}
	for _, tc := range bad[:2] { // before the session is initialized
		c.send(tc.line)
		if got := c.recv(); got != tc.want {
			t.Errorf("%q: got %s, want %s", tc.line, got, tc.want)
		}
	}
	c.handshake()
	for _, tc := range bad {
		c.send(tc.line)
		if got := c.recv(); got != tc.want {
			t.Errorf("%q: got %s, want %s", tc.line, got, tc.want)
		}
	}
	// Blank lines are skipped; white space around a message and a CRLF
	// ending are not errors.
	c.send("")
	c.send(" \t\r")
	c.send(" \t" + `{"jsonrpc":"2.0","id":3,"method":"ping"}` + " \r")
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":3,"result":{}}`; got != want {
		t.Errorf("ping: got %s, want %s", got, want)
	}
	// A valid message with an unknown method gets the SDK's answer.
	c.send(`{"jsonrpc":"2.0","id":4,"method":"no/such"}`)
	if got := c.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,`) {
		t.Errorf("unknown method: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read","arguments":{"file_path":"a.txt"}}}`)
	if got := c.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":5,"result":{`) || !strings.Contains(got, `1: alpha`) {
		t.Errorf("read after the bad lines: %s", got)
	}
}

// A line longer than the limit is skipped whole, answered and said
// (mcpevents.RefusalEvent); the next line is read as usual. One of exactly
// the limit passes.
func TestIOTransportLineTooLong(t *testing.T) {
	const limit = 1 << 20
	fx := newFixture(t)
	ev := recordEvents(t, fx.d.Root)
	c, _ := serveRawLimited(t, fx, limit)
	c.handshake()
	ping := func(id int, size int) string {
		head := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"ping","params":{"x":"`
		return head + strings.Repeat("x", size-len(head)-len(`"}}`)) + `"}}`
	}
	c.send(ping(2, limit))
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":2,"result":{}}`; got != want {
		t.Errorf("a message of the limit: got %s, want %s", got, want)
	}
	c.send(ping(3, limit+1))
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"invalid request: the message is larger than 1048576 bytes"}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// An id behind the large value is not looked for: the answer's is null.
	c.send(`{"jsonrpc":"2.0","method":"ping","params":{"x":"` + strings.Repeat("x", limit) + `"},"id":5}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the message is larger than 1048576 bytes"}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":4,"result":{}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	want := []string{"session open=true id=false", "refused message", "refused message"}
	if got := ev.await(t, len(want)); !slices.Equal(got, want) {
		t.Errorf("events: %q, want %q", got, want)
	}
}

// The last line may lack its newline; the end of input then ends the
// session.
func TestIOTransportLastLine(t *testing.T) {
	const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	tr := mcpserver.NewIOTransport(io.NopCloser(strings.NewReader(" "+ping)), discard{io.Discard}, 0)
	if passed, err := io.ReadAll(tr.Reader); err != nil || string(passed) != ping+"\n" {
		t.Errorf("passed %q, %v; want %q", passed, err, ping+"\n")
	}

	c, ss := serveRaw(t, newFixture(t))
	c.handshake()
	if _, err := io.WriteString(c.in, "garbage"); err != nil {
		t.Fatal(err)
	}
	c.in.Close()
	if got := c.recv(); got != parseError {
		t.Errorf("got %s, want %s", got, parseError)
	}
	waited := make(chan error, 1)
	go func() { waited <- ss.Wait() }()
	await(t, waited, "the session to end")
}

type discard struct{ io.Writer }

func (discard) Close() error { return nil }

// What the filter passes on, the SDK's stdio reader takes: each line is one
// JSON value that decodes as a JSON-RPC message or a batch of them. So no
// input line can end the session.
func FuzzIOTransport(f *testing.F) {
	for _, seed := range []string{
		initialize + "\n" + initialized + "\n",
		"garbage\n{}\n[]\n[1]\n",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]` + "\n",
		" \t" + `{"jsonrpc":"2.0","id":"a","method":"ping"}` + "\r\n\n",
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		tr := mcpserver.NewIOTransport(io.NopCloser(bytes.NewReader(input)), discard{io.Discard}, 0)
		passed, err := io.ReadAll(tr.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if len(passed) > 0 && passed[len(passed)-1] != '\n' {
			t.Fatalf("%q passed %q: no final newline", input, passed)
		}
		for _, line := range bytes.Split(passed, []byte("\n"))[:bytes.Count(passed, []byte("\n"))] {
			if !json.Valid(line) { // nor two values on one line
				t.Fatalf("%q passed %q", input, line)
			}
			var batch []json.RawMessage
			if json.Unmarshal(line, &batch) != nil {
				batch = []json.RawMessage{line}
			}
			for _, m := range batch {
				if _, err := jsonrpc.DecodeMessage(m); err != nil {
					t.Fatalf("%q passed %s: %v", input, m, err)
				}
			}
		}
	})
}

// Reading a call off the SDK's stdio connection, without and with the
// filter, which checks each line as JSON and as a JSON-RPC message before
// the SDK decodes it: a small read, and a 1 MiB write, the size of a large
// file write.
func BenchmarkIOTransport(b *testing.B) {
	call := func(name, args string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}` + "\n")
	}
	for _, size := range []struct {
		name string
		line []byte
	}{
		{"read", call("read", `{"file_path":"a.txt"}`)},
		{"write-1MiB", call("write", `{"file_path":"a.txt","content":"`+strings.Repeat(`0123456789abcdef\n`, 1<<16)+`"}`)},
	} {
		for _, tc := range []struct {
			name      string
			transport func(io.ReadCloser) *mcp.IOTransport
		}{
			{"sdk", func(r io.ReadCloser) *mcp.IOTransport {
				return &mcp.IOTransport{Reader: r, Writer: discard{io.Discard}}
			}},
			{"filtered", func(r io.ReadCloser) *mcp.IOTransport { return mcpserver.NewIOTransport(r, discard{io.Discard}, 0) }},
		} {
			b.Run(size.name+"/"+tc.name, func(b *testing.B) {
				conn, err := tc.transport(io.NopCloser(&repeat{line: size.line})).Connect(b.Context())
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close()
				b.SetBytes(int64(len(size.line)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := conn.Read(b.Context()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// repeat reads line over and over.
type repeat struct {
	line []byte
	off  int
}

func (r *repeat) Read(p []byte) (int, error) {
	n := copy(p, r.line[r.off:])
	r.off = (r.off + n) % len(r.line)
	return n, nil
}
