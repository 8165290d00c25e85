package mcpserver

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"
)

// The SDK decodes a message three times over before a tool sees it (the
// JSON-RPC envelope, the call's params, then its arguments), each time
// through a decoder that buffers the whole value and then copies it: a
// 64 MiB write allocates about 1 GiB and peaks near 10x its size. So the
// arguments of a large call go around it. The transports cut them out of
// the message and give the SDK a small placeholder in their place; the
// tool handler swaps the arguments back in. The message's other bytes
// reach the SDK unchanged, so it still answers everything else: the id,
// the method, the tool's name, progress tokens, errors.

// divertAbove is the size of arguments worth going around the SDK.
const divertAbove = 1 << 20

// divertExpiry is how long diverted arguments wait for their call: a call
// the SDK refuses before the handler (an unknown tool, a closed session)
// never takes them.
const divertExpiry = time.Minute

// placeholderKey marks the arguments the handler swaps back in.
const placeholderKey = "gordis.diverted"

// diversions hold the arguments cut out of messages until their calls
// take them, at most limit bytes at once (two of the largest messages a
// transport takes): beyond it, a message goes to the SDK whole.
type diversions struct {
	mu    sync.Mutex
	limit int64
	held  map[string]json.RawMessage // by the placeholder's nonce
	bytes int64                      // the sum of held
}

// allow raises the limit to two messages of maxMessage bytes.
func (d *diversions) allow(maxMessage int64) {
	d.mu.Lock()
	d.limit = max(d.limit, 2*maxMessage)
	d.mu.Unlock()
}

// divertBody diverts the arguments of a large call in a request's body,
// read whole into a buffer of its declared length.
func (d *diversions) divertBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") == "" || r.ContentLength <= divertAbove {
			next.ServeHTTP(w, r)
			return
		}
		body := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			http.Error(w, "failed to read body", http.StatusBadRequest)
			return
		}
		if json.Valid(body) {
			body = d.divert(body)
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// divert returns msg with the arguments of a tools/call request larger
// than divertAbove replaced by a placeholder, or msg itself. msg must be
// valid JSON. The arguments stay a slice of msg: the caller must not reuse
// msg's bytes.
func (d *diversions) divert(msg []byte) []byte {
	start, end, ok := callArguments(msg)
	if !ok || end-start <= divertAbove {
		return msg
	}
	args := json.RawMessage(msg[start:end])
	nonce := rand.Text()
	d.mu.Lock()
	if d.bytes+int64(len(args)) > d.limit {
		d.mu.Unlock()
		return msg
	}
	d.held[nonce] = args
	d.bytes += int64(len(args))
	d.mu.Unlock()
	time.AfterFunc(divertExpiry, func() { d.take(nonce) })

	placeholder := `{"` + placeholderKey + `":"` + nonce + `"}`
	out := make([]byte, 0, start+len(placeholder)+len(msg)-end)
	return append(append(append(out, msg[:start]...), placeholder...), msg[end:]...)
}

// restore returns the arguments a placeholder stands for, or args itself.
func (d *diversions) restore(args json.RawMessage) json.RawMessage {
	if len(args) > 64 || !bytes.Contains(args, []byte(placeholderKey)) {
		return args
	}
	var p map[string]string
	if json.Unmarshal(args, &p) != nil || len(p) != 1 || p[placeholderKey] == "" {
		return args
	}
	if held, ok := d.take(p[placeholderKey]); ok {
		return held
	}
	return args
}

func (d *diversions) take(nonce string) (json.RawMessage, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	args, ok := d.held[nonce]
	if ok {
		delete(d.held, nonce)
		d.bytes -= int64(len(args))
	}
	return args, ok
}

// callArguments finds params.arguments in a JSON-RPC 2.0 tools/call
// request with an id: the byte range of its value. msg must be valid JSON;
// anything unexpected (a duplicate or escaped key, a notification, another
// method) is not found, and the message then takes the SDK's path.
func callArguments(msg []byte) (start, end int, ok bool) {
	var version, id, method string
	paramsStart, paramsEnd := -1, -1
	if !members(msg, 0, func(key string, vs, ve int) bool {
		switch key {
		case "jsonrpc":
			if version != "" {
				return false
			}
			version = string(msg[vs:ve])
		case "id":
			if id != "" {
				return false
			}
			id = string(msg[vs:ve])
		case "method":
			if method != "" {
				return false
			}
			method = string(msg[vs:ve])
		case "params":
			if paramsStart >= 0 {
				return false
			}
			paramsStart, paramsEnd = vs, ve
		}
		return true
	}) || version != `"2.0"` || id == "" || id == "null" || method != `"tools/call"` || paramsStart < 0 {
		return 0, 0, false
	}
	start = -1
	if !members(msg[:paramsEnd], paramsStart, func(key string, vs, ve int) bool {
		if key != "arguments" {
			return true
		}
		if start >= 0 {
			return false
		}
		start, end = vs, ve
		return true
	}) || start < 0 || msg[start] != '{' {
		return 0, 0, false
	}
	return start, end, true
}

// members calls visit with the key and value range of each member of the
// object at msg[i:], a valid JSON value. A key with an escape is passed
// raw, so that it matches no name. It reports false if msg[i:] is not an
// object or visit returned false.
func members(msg []byte, i int, visit func(key string, vs, ve int) bool) bool {
	i = skipSpace(msg, i)
	if i >= len(msg) || msg[i] != '{' {
		return false
	}
	i = skipSpace(msg, i+1)
	for i < len(msg) && msg[i] == '"' {
		ke := skipValue(msg, i)
		key := string(msg[i+1 : ke-1])
		vs := skipSpace(msg, skipSpace(msg, ke)+1) // past the colon
		ve := skipValue(msg, vs)
		if !visit(key, vs, ve) {
			return false
		}
		i = skipSpace(msg, ve)
		if i < len(msg) && msg[i] == ',' {
			i = skipSpace(msg, i+1)
		}
	}
	return true
}

func skipSpace(msg []byte, i int) int {
	for i < len(msg) && (msg[i] == ' ' || msg[i] == '\t' || msg[i] == '\n' || msg[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the valid JSON value at msg[i].
func skipValue(msg []byte, i int) int {
	switch msg[i] {
	case '"':
		return skipString(msg, i)
	case '{', '[':
		depth := 0
		for i < len(msg) {
			switch msg[i] {
			case '"':
				i = skipString(msg, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // a number, true, false or null
		for ; i < len(msg); i++ {
			switch msg[i] {
			case ' ', '\t', '\n', '\r', ',', ']', '}':
				return i
			}
		}
		return i
	}
}

// skipString returns the end of the valid JSON string at msg[i].
func skipString(msg []byte, i int) int {
	for i++; ; i++ {
		j := bytes.IndexByte(msg[i:], '"')
		if j < 0 {
			return len(msg)
		}
		i += j
		backslashes := 0
		for k := i - 1; msg[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return i + 1
		}
	}
}
