package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewIOTransport is the transport of a server that speaks newline-delimited
// JSON-RPC on r and w, a process's stdin and stdout: an mcp.IOTransport
// that survives a client's bad line. The SDK's own ends the session on any
// line it cannot take, so one malformed line would take every tool away.
// Here a line that is not JSON is answered with a parse error (-32700), and
// a line of JSON that is not a JSON-RPC message (nor a non-empty batch of
// them) with an invalid request (-32600), both with a null id as JSON-RPC
// 2.0 requires, and reading goes on. A line longer than maxMessage bytes
// (0: DefaultMaxMessage) is skipped and answered with an invalid request
// too, without being held in memory. What the
// SDK can decode goes to it unchanged, so a valid message with an unknown
// method or wrong params gets the SDK's answer, and a batch is the SDK's to
// accept or refuse by protocol version.
func NewIOTransport(r io.ReadCloser, w io.WriteCloser, maxMessage int64) *mcp.IOTransport {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessage
	}
	out := &lockedWriter{w: w}
	return &mcp.IOTransport{
		Reader: &lineFilter{src: r, in: bufio.NewReader(r), out: out, max: maxMessage + 1},
		Writer: out,
		// The filter bounds every line it passes on.
		MaxLineLength: -1,
	}
}

// The answers to a line the SDK would end the session on.
var (
	parseError     = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}` + "\n")
	invalidRequest = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}` + "\n")
)

// lineFilter reads lines from src and passes on those the SDK can decode,
// trimmed of surrounding white space and ended by one newline. It answers
// the others itself on out. Only the SDK's read loop calls Read.
type lineFilter struct {
	src  io.Closer
	in   *bufio.Reader
	out  *lockedWriter
	max  int64  // the longest line passed on, its newline included
	buf  []byte // the current line; it keeps the longest line's size, as the SDK's decoder does
	rest []byte // what of the current line Read has not returned yet
	err  error  // what ended src, returned once rest is empty: the last line may lack its newline
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.rest) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, tooLong, err := f.readLine()
		if f.err = err; err != nil && err != io.EOF {
			return 0, err // a broken stream, not a bad line
		}
		var answer []byte
		if tooLong {
			answer = tooLarge(line, f.max-1)
		} else {
			if line = bytes.Trim(line, jsonSpace); len(line) == 0 {
				continue // the SDK skips white space too
			}
			if answer = judge(line); answer == nil {
				f.rest = append(line, '\n')
				break
			}
		}
		if _, err := f.out.Write(answer); err != nil {
			return 0, err
		}
	}
	n := copy(p, f.rest)
	f.rest = f.rest[n:]
	return n, nil
}

// jsonSpace is the white space JSON allows around a value.
const jsonSpace = " \t\r\n"

// keptBuffer is the largest line buffer kept for the next line: a large
// write's buffer is not held for the rest of the session.
const keptBuffer = 1 << 20

// readLine reads through the next newline or the end of src. Of a line
// longer than f.max only the start is kept (idWindow bytes, where its id
// is), and tooLong is set.
func (f *lineFilter) readLine() (line []byte, tooLong bool, err error) {
	if cap(f.buf) > keptBuffer {
		f.buf = nil
	}
	f.buf = f.buf[:0]
	for {
		chunk, err := f.in.ReadSlice('\n')
		if !tooLong {
			if int64(len(f.buf)+len(chunk)) > f.max {
				tooLong = true
				f.buf = append(f.buf, chunk...)[:min(len(f.buf)+len(chunk), idWindow)]
			} else {
				f.buf = append(f.buf, chunk...)
			}
		}
		if err != bufio.ErrBufferFull {
			return f.buf, tooLong, err
		}
	}
}

// judge is the answer to a trimmed line the SDK could not take, or nil.
func judge(line []byte) []byte {
	if !json.Valid(line) {
		return parseError
	}
	if line[0] != '[' {
		if _, err := jsonrpc.DecodeMessage(line); err != nil {
			return invalidRequest
		}
		return nil
	}
	var batch []json.RawMessage
	if err := json.Unmarshal(line, &batch); err != nil || len(batch) == 0 {
		return invalidRequest
	}
	for _, m := range batch {
		if _, err := jsonrpc.DecodeMessage(m); err != nil {
			return invalidRequest
		}
	}
	return nil
}

func (f *lineFilter) Close() error { return f.src.Close() }

// lockedWriter lets the filter's answers and the SDK's messages share w:
// each Write is one whole message, and they do not interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close does not wait for a Write: one blocked on a peer that stopped
// reading must not hold up the close.
func (l *lockedWriter) Close() error { return l.w.Close() }
