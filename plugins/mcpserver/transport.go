package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis/plugins/mcpserver/mcpevents"
)

// NewIOTransport is the transport of a server that speaks newline-delimited
// JSON-RPC on r and w, a process's stdin and stdout: an mcp.IOTransport
// that survives a client's bad line. The SDK's own ends the session on any
// line it cannot take, so one malformed line would take every tool away.
// Here a line that is not JSON is answered with a parse error (-32700), and
// a line of JSON that is not a JSON-RPC message (nor a non-empty batch of
// them) with an invalid request (-32600), both with a null id as JSON-RPC
// 2.0 requires, and reading goes on. A line longer than maxMessage bytes
// (0 or less: DefaultMaxMessage) is skipped and answered with an invalid request
// too, without being held in memory. What the
// SDK can decode goes to it unchanged, so a valid message with an unknown
// method or wrong params gets the SDK's answer, and a batch is the SDK's to
// accept or refuse by protocol version.
func NewIOTransport(r io.ReadCloser, w io.WriteCloser, maxMessage int64) *mcp.IOTransport {
	return newIOTransport(r, w, maxMessage, nil, nil)
}

// IOTransport is NewIOTransport for s: the arguments of a large call go
// around the SDK's decoding (divert.go), which costs many times their size.
func (s *Server) IOTransport(r io.ReadCloser, w io.WriteCloser, maxMessage int64) *mcp.IOTransport {
	return newIOTransport(r, w, maxMessage, &s.diverted, func() { s.refused(mcpevents.LimitMessage) })
}

func newIOTransport(r io.ReadCloser, w io.WriteCloser, maxMessage int64, d *diversions, tooLong func()) *mcp.IOTransport {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessage
	}
	if d != nil {
		d.allow(maxMessage)
	}
	out := &lockedWriter{w: w}
	return &mcp.IOTransport{
		Reader: &lineFilter{src: r, in: bufio.NewReader(r), out: out, max: maxMessage + 1, diverted: d, tooLong: tooLong},
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
	src io.Closer
	in  *bufio.Reader
	out *lockedWriter
	max int64  // the longest line passed on, its newline included
	buf []byte // the current line; up to keptBuffer, it keeps the longest line's size

	diverted *diversions // nil: every line goes to the SDK whole
	tooLong  func()      // called for each line refused as too long; may be nil
	rest     []byte      // what of the current line Read has not returned yet
	err      error       // what ended src, returned once rest is empty: the last line may lack its newline
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
			if f.tooLong != nil {
				f.tooLong()
			}
		} else {
			if line = bytes.Trim(line, jsonSpace); len(line) == 0 {
				continue // the SDK skips white space too
			}
			var pass []byte
			if pass, answer = judge(line, f.diverted); answer == nil {
				if len(pass) != len(line) {
					f.buf = nil // diverted arguments live in it
				}
				f.rest = append(pass, '\n')
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
// is), and tooLong is set. A line longer than keptBuffer is read in blocks
// of that size and joined once: growing one buffer would copy it over and
// over and leave its old copies to the collector, several times its size.
func (f *lineFilter) readLine() (line []byte, tooLong bool, err error) {
	if cap(f.buf) > keptBuffer {
		f.buf = nil
	}
	f.buf = f.buf[:0]
	var blocks [][]byte // the full blocks of a long line, before f.buf
	size := 0
	for {
		chunk, err := f.in.ReadSlice('\n')
		switch {
		case tooLong:
		case int64(size+len(chunk)) > f.max:
			tooLong = true
			if len(blocks) > 0 {
				f.buf = blocks[0]
			}
			f.buf = append(f.buf, chunk...)[:min(len(f.buf)+len(chunk), idWindow)]
			blocks = nil
		default:
			if len(f.buf)+len(chunk) > keptBuffer {
				blocks = append(blocks, f.buf)
				f.buf = make([]byte, 0, keptBuffer)
			}
			f.buf = append(f.buf, chunk...)
			size += len(chunk)
		}
		if err != bufio.ErrBufferFull {
			if len(blocks) > 0 {
				line := make([]byte, 0, size)
				for _, b := range blocks {
					line = append(line, b...)
				}
				f.buf = append(line, f.buf...)
				// The blocks are garbage now, as large as the line. Left
				// to the pacer, they are still there while the tool
				// decodes the line's arguments: a 64 MiB write then peaked
				// at 3.3x its size, and at 2.3x with this collection (no
				// pointers in them: it costs little).
				runtime.GC()
			}
			return f.buf, tooLong, err
		}
	}
}

// judge is the answer to a trimmed line the SDK could not take, or else
// the line to pass on: with the arguments of a large call diverted if d is
// not nil.
func judge(line []byte, d *diversions) (pass, answer []byte) {
	if !json.Valid(line) {
		return nil, parseError
	}
	if d != nil {
		line = d.divert(line)
	}
	if line[0] != '[' {
		if _, err := jsonrpc.DecodeMessage(line); err != nil {
			return nil, invalidRequest
		}
		return line, nil
	}
	var batch []json.RawMessage
	if err := json.Unmarshal(line, &batch); err != nil || len(batch) == 0 {
		return nil, invalidRequest
	}
	for _, m := range batch {
		if _, err := jsonrpc.DecodeMessage(m); err != nil {
			return nil, invalidRequest
		}
	}
	return line, nil
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
