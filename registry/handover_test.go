package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/gordis-run/gordis/runtime"
)

// seen is what each party of one call saw in call.Args, and what the tool
// decoded.
type seen struct {
	pre, tool, after string
	paths            []string
	content          string
	shared           bool // the content shares the storage of the bytes handed over
}

// A call that hands its arguments over gets its long strings decoded into
// them; the tool receives them whole, Args read with those strings cut
// (in the tool, in tools/pre-execute and after the call), and a path
// argument is never cut. A call that does not,
// or whose arguments are refused, keeps its Args as given.
func TestHandOverArgs(t *testing.T) {
	root, r := newRegistry(t, Config{})
	var got seen
	var given []byte
	if _, err := PreExecute.On(root, func(req *Request, next runtime.Next[Decision]) (Decision, error) {
		got.pre, got.paths = string(req.Call.Args), req.Paths()
		return next()
	}); err != nil {
		t.Fatal(err)
	}
	tool := mustDefine(t, "put", func(_ context.Context, call *Call, a pathArgs) (int, error) {
		got.tool, got.content = string(call.Args), a.Content
		start := uintptr(unsafe.Pointer(unsafe.StringData(a.Content)))
		base := uintptr(unsafe.Pointer(unsafe.SliceData(given)))
		got.shared = start >= base && start < base+uintptr(len(given))
		return len(a.Content), nil
	}, nil)
	tool.Traits.Paths = []string{"file_path", "dest"}
	mustRegister(t, root, r, tool)

	lines := strings.Repeat(strings.Repeat("x", 63)+"\n", 2048) // 128 KiB, one escape a line
	long := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	cut := `"` + strings.Repeat(strings.Repeat("x", 63)+`\n`, 16) + `…(130048 bytes more)"`
	longPath := strings.Repeat("d/", 40000) + "f\tg"

	tests := []struct {
		name     string
		args     string
		handOver bool
		args2    string // what everyone sees in Args ("" for args itself)
		text     string
		shared   bool
	}{{
		name:     "handed over: content decoded in place, Args cut",
		args:     `{"file_path":"a.txt","content":` + long(lines) + `}`,
		handOver: true,
		args2:    `{"file_path":"a.txt","content":` + cut + `}`,
		text:     "131072",
		shared:   true,
	}, {
		name: "not handed over: a copy, Args as given",
		args: `{"file_path":"a.txt","content":` + long(lines) + `}`,
		text: "131072",
	}, {
		name:     "a string without escapes is shared and Args stay whole",
		args:     `{"file_path":"a.txt","content":"` + strings.Repeat("y", 100_000) + `"}`,
		handOver: true,
		text:     "100000",
		shared:   true,
	}, {
		name:     "a short string is copied",
		args:     `{"file_path":"a.txt","content":"x\ny"}`,
		handOver: true,
		text:     "3",
	}, {
		name:     "a path is never cut",
		args:     `{"file_path":` + long(longPath) + `,"content":"x"}`,
		handOver: true,
		text:     "1",
	}, {
		name:     "refused arguments stay as given",
		args:     `{"content":` + long(lines) + `}`,
		handOver: true,
		text:     `Error: invalid arguments: missing required property "file_path"`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = seen{}
			given = []byte(tt.args)
			call := &Call{Tool: "put", Args: given, HandOverArgs: tt.handOver}
			res := r.Execute(context.Background(), call)
			got.after = string(call.Args)
			if res.Text != tt.text {
				t.Fatalf("result %q, want %q", res.Text, tt.text)
			}
			want := tt.args2
			if want == "" {
				want = tt.args
			}
			if res.IsError { // no listener or tool ran
				if got.after != want || string(given) != tt.args {
					t.Errorf("refused arguments changed: %.80q", given)
				}
				return
			}
			if got.pre != want || got.tool != want || got.after != want {
				t.Errorf("Args seen by pre-execute %.80q, the tool %.80q, the caller after the call %.80q; want %.80q", got.pre, got.tool, got.after, want)
			}
			var a pathArgs
			if err := json.Unmarshal([]byte(tt.args), &a); err != nil {
				t.Fatal(err)
			}
			if got.content != a.Content || fmt.Sprint(got.paths) != fmt.Sprint([]string{a.FilePath}) {
				t.Errorf("the tool got %d bytes of content and the listener paths %.40q; want %d and %.40q", len(got.content), got.paths, len(a.Content), a.FilePath)
			}
			if got.shared != tt.shared {
				t.Errorf("content shares the arguments' storage: %v, want %v", got.shared, tt.shared)
			}
		})
	}
}

// The calls of one batch may hand over parts of one buffer, as the calls
// of one replayed line do: each is decoded in its own part, and the
// bodies, running in parallel, each read their own content from it.
func TestHandOverArgsBatch(t *testing.T) {
	root, r := newRegistry(t, Config{})
	tool := mustDefine(t, "size", func(_ context.Context, _ *Call, a pathArgs) (string, error) {
		return fmt.Sprintf("%s %d %q", a.FilePath, len(a.Content), a.Content[len(a.Content)-3:]), nil
	}, func(s string) string { return s })
	tool.ConcurrencySafe = func(json.RawMessage) bool { return true }
	mustRegister(t, root, r, tool)

	var line []byte
	var spans [][2]int
	var want []string
	for i := range 4 {
		content := strings.Repeat(fmt.Sprintf("call %d\n", i), 20_000) + fmt.Sprint(i)
		args, _ := json.Marshal(pathArgs{FilePath: fmt.Sprint(i), Content: content})
		spans = append(spans, [2]int{len(line), len(line) + len(args)})
		line = append(append(line, args...), ',')
		want = append(want, fmt.Sprintf("%d %d %q", i, len(content), content[len(content)-3:]))
	}
	calls := make([]*Call, len(spans))
	for i, sp := range spans {
		calls[i] = &Call{ID: fmt.Sprint(i), Tool: "size", Args: line[sp[0]:sp[1]:sp[1]], HandOverArgs: true}
	}
	for i, res := range r.ExecuteBatch(context.Background(), calls) {
		if res.Text != want[i] {
			t.Errorf("call %d: %q, want %q", i, res.Text, want[i])
		}
	}
}
