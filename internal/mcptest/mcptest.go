// Package mcptest holds what the MCP tests share: a buffer safe for the
// concurrent writes of a subprocess or a logging transport, and the reading
// of a logged tools/list response.
package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// Buffer is a bytes.Buffer safe for concurrent use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// InputSchemas finds the first tools/list response in the log of an
// mcp.LoggingTransport on the client side and returns each tool's input
// schema as it came over the wire, by tool name. Without one, t fails.
func InputSchemas(t testing.TB, log string) map[string]json.RawMessage {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "read: ")
		if !ok {
			continue
		}
		var msg struct {
			Result struct {
				Tools []struct {
					Name        string          `json:"name"`
					InputSchema json.RawMessage `json:"inputSchema"`
				} `json:"tools"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(line), &msg) != nil || msg.Result.Tools == nil {
			continue
		}
		out := map[string]json.RawMessage{}
		for _, tool := range msg.Result.Tools {
			out[tool.Name] = tool.InputSchema
		}
		return out
	}
	t.Fatalf("no tools/list response in the log (%v):\n%s", sc.Err(), log)
	return nil
}
