package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis/plugins/mcpserver/mcpevents"
)

// idWindow is how much of a message's start is searched for its id.
const idWindow = 4 << 10

// tooLarge is the answer to a message over limit bytes, given its start.
func tooLarge(start []byte, limit int64) []byte {
	return refusal(start, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: the message is larger than %d bytes", limit))
}

// refusal is a JSON-RPC error for the message that start begins: with its
// id when start gives it, so that the client fails that one request rather
// than waiting for an answer or dropping the session; with a null id
// otherwise, as JSON-RPC 2.0 wants.
func refusal(start []byte, code int64, msg string) []byte {
	if id, ok := idOf(start); ok {
		resp := &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: msg}}
		if data, err := jsonrpc.EncodeMessage(resp); err == nil {
			return append(data, '\n')
		}
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":%q}}`+"\n", code, msg)
}

// idOf is the id of the request object that start begins, found when it
// precedes every value that start does not hold whole. Clients write it
// ahead of the params, which are what makes a message large.
func idOf(start []byte) (jsonrpc.ID, bool) {
	dec := json.NewDecoder(bytes.NewReader(start))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return jsonrpc.ID{}, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return jsonrpc.ID{}, false
		}
		var value any
		if err := dec.Decode(&value); err != nil {
			return jsonrpc.ID{}, false
		}
		if key == "id" {
			id, err := jsonrpc.MakeID(value)
			return id, err == nil && id.IsValid()
		}
	}
	return jsonrpc.ID{}, false
}

// refuseSessionless answers a request of the sessionless protocol
// (2026-07-28 and later) with 400 and CodeUnsupportedProtocolVersion: this
// handler keeps sessions, which hold the reads of read-before-write, and the
// SDK's stateful handler would leave a session open for each such probe
// until it timed out. Clients then fall back to initialize.
func refuseSessionless(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" || r.Header.Get("Mcp-Protocol-Version") < "2026-07-28" {
			next.ServeHTTP(w, r)
			return
		}
		start, _ := io.ReadAll(io.LimitReader(r.Body, idWindow))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(refusal(start, mcp.CodeUnsupportedProtocolVersion, "this server keeps sessions: use a protocol version before 2026-07-28"))
	})
}

// refuseLarge answers a request whose declared body exceeds limit with 413
// and tooLarge's error, before anything reads the body. A body of unknown
// length is bounded by the SDK as it reads (413 too, in plain text, and
// not counted).
func (s *Server) refuseLarge(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength <= limit {
			next.ServeHTTP(w, r)
			return
		}
		s.refused(mcpevents.LimitMessage)
		start, _ := io.ReadAll(io.LimitReader(r.Body, idWindow))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		w.Write(tooLarge(start, limit))
	})
}
