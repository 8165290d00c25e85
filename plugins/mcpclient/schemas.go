package mcpclient

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK hands a client each tool's input schema decoded into a map, and a
// map re-encodes with its keys sorted: the model would see the properties
// in another order than the server wrote them. schemaTap sits between the
// client and the transport and keeps the schemas of tools/list responses
// as they came over the wire.

// schemaTap wraps a transport; schemas holds, by tool name, the input
// schema of the latest tools/list response that named the tool.
type schemaTap struct {
	mcp.Transport
	schemas *rawSchemas
}

var (
	_ mcp.Transport  = (*schemaTap)(nil)
	_ mcp.Connection = (*tapConn)(nil)
)

type rawSchemas struct {
	mu     sync.Mutex
	byName map[string]json.RawMessage
}

func newRawSchemas() *rawSchemas { return &rawSchemas{byName: map[string]json.RawMessage{}} }

// get returns the schema of tool as sent, or nil if none was seen.
func (s *rawSchemas) get(tool string) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byName[tool]
}

func (s *rawSchemas) record(result json.RawMessage) {
	var listed struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &listed) != nil {
		return // the SDK reports a malformed result itself
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range listed.Tools {
		s.byName[t.Name] = t.InputSchema
	}
}

func (t *schemaTap) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &tapConn{Connection: conn, schemas: t.schemas, pending: map[jsonrpc.ID]bool{}}, nil
}

// tapConn notes the IDs of outgoing tools/list requests and records the
// responses to them.
type tapConn struct {
	mcp.Connection
	schemas *rawSchemas

	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
}

func (c *tapConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" && req.ID.IsValid() {
		c.mu.Lock()
		c.pending[req.ID] = true
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *tapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.mu.Lock()
		listing := c.pending[resp.ID]
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		if listing && resp.Error == nil {
			c.schemas.record(resp.Result)
		}
	}
	return msg, err
}
