package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/registry"
)

// The MCP path (in-memory transport, JSON-RPC both ways, result mapping)
// against the registry call it wraps, on the same small read.
func BenchmarkRead(b *testing.B) {
	b.Run("mcp", func(b *testing.B) {
		fx := newBenchFixture(b)
		cs := fx.connect(b, nil, nil)
		params := &mcp.CallToolParams{Name: "read", Arguments: json.RawMessage(`{"file_path":"a.txt"}`)}
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.CallTool(b.Context(), params)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
	b.Run("execute", func(b *testing.B) {
		fx := newBenchFixture(b)
		session := agent.NewSession(fx.d.Workspace)
		defer session.Close()
		b.ReportAllocs()
		for b.Loop() {
			res := fx.d.Tools.Execute(b.Context(), &registry.Call{ID: "1", Tool: "read", Args: json.RawMessage(`{"file_path":"a.txt"}`), Session: session})
			if res.IsError {
				b.Fatal(res.Text)
			}
		}
	})
}

func newBenchFixture(b *testing.B) *fixture {
	fx := newFixture(b)
	fx.file(b, "a.txt", strings.Repeat("a line of text\n", 200))
	return fx
}
