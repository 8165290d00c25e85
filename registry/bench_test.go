package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

type trivialArgs struct {
	FilePath string   `json:"file_path"`
	Offset   *float64 `json:"offset,omitempty"`
	Limit    *float64 `json:"limit,omitempty"`
}

func trivialTool(b *testing.B, safe bool) Tool {
	tool, err := Define("trivial", "", func(_ context.Context, _ *Call, a trivialArgs) (string, error) {
		return a.FilePath, nil
	}, func(s string) string { return s })
	if err != nil {
		b.Fatal(err)
	}
	if safe {
		tool.ConcurrencySafe = func(json.RawMessage) bool { return true }
	}
	return tool
}

var trivialCall = json.RawMessage(`{"file_path":"/workspace/src/main.go","offset":120,"limit":200}`)

// BenchmarkExecuteTrivial: validate, permission (no listener), decode,
// execute, render and emit (no listener) for one call.
func BenchmarkExecuteTrivial(b *testing.B) {
	root, r := newRegistry(b, Config{})
	mustRegister(b, root, r, trivialTool(b, false))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := r.Execute(ctx, &Call{ID: "c", Tool: "trivial", Args: trivialCall}); res.IsError {
			b.Fatal(res.Text)
		}
	}
}

// BenchmarkExecuteTrivialCancellable is BenchmarkExecuteTrivial with a
// context that can end, as an agent's is: tools/pre-execute and tools/result
// are then awaited each on a goroutine of their own (Await).
func BenchmarkExecuteTrivialCancellable(b *testing.B) {
	root, r := newRegistry(b, Config{})
	mustRegister(b, root, r, trivialTool(b, false))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if res := r.Execute(ctx, &Call{ID: "c", Tool: "trivial", Args: trivialCall}); res.IsError {
			b.Fatal(res.Text)
		}
	}
}

// BenchmarkExecuteInvalidArgs: the schema-violation path.
func BenchmarkExecuteInvalidArgs(b *testing.B) {
	root, r := newRegistry(b, Config{})
	mustRegister(b, root, r, trivialTool(b, false))
	ctx := context.Background()
	args := json.RawMessage(`{"offset":null,"limit":"x"}`)
	b.ReportAllocs()
	for b.Loop() {
		if res := r.Execute(ctx, &Call{ID: "c", Tool: "trivial", Args: args}); !res.IsError {
			b.Fatal("valid")
		}
	}
}

// BenchmarkBatch10Parallel: one assistant message with ten concurrency-safe
// calls.
func BenchmarkBatch10Parallel(b *testing.B) {
	root, r := newRegistry(b, Config{})
	mustRegister(b, root, r, trivialTool(b, true))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		cs := make([]*Call, 10)
		for i := range cs {
			cs[i] = &Call{ID: fmt.Sprint(i), Tool: "trivial", Args: trivialCall}
		}
		for _, res := range r.ExecuteBatch(ctx, cs) {
			if res.IsError {
				b.Fatal(res.Text)
			}
		}
	}
}

// BenchmarkExecuteLongString: a call with 8 MiB of text (a newline every
// 64 bytes), its arguments fresh each time as a line read from input is;
// handed over, the text is decoded into them instead of into a copy.
func BenchmarkExecuteLongString(b *testing.B) {
	root, r := newRegistry(b, Config{})
	tool, err := Define("put", "", func(_ context.Context, _ *Call, a pathArgs) (int, error) {
		return len(a.Content), nil
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	mustRegister(b, root, r, tool)
	content := strings.Repeat(strings.Repeat("x", 63)+"\n", 8<<20/64)
	args, _ := json.Marshal(pathArgs{FilePath: "a.txt", Content: content})
	ctx := context.Background()
	for _, handOver := range []bool{false, true} {
		b.Run(fmt.Sprintf("handOver=%v", handOver), func(b *testing.B) {
			b.SetBytes(int64(len(content)))
			b.ReportAllocs()
			for b.Loop() {
				call := &Call{ID: "c", Tool: "put", Args: bytes.Clone(args), HandOverArgs: handOver}
				if res := r.Execute(ctx, call); res.IsError {
					b.Fatal(res.Text)
				}
			}
		})
	}
}
