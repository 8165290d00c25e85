package mcpserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestCallArguments(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want string // the arguments found, "" for none
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{"a":"b"}}}`, `{"a":"b"}`},
		{` { "params" : { "arguments" : { "s" : "x\"}" } , "name" : "w" } , "method" : "tools/call" , "id" : "x" , "jsonrpc" : "2.0" } `, `{ "s" : "x\"}" }`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{}}}`, ""},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"arguments":{}}}`, ""},
		{`{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"arguments":{}}}`, ""},
		{`{"id":1,"method":"tools/call","params":{"arguments":{}}}`, ""},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"arguments":{"no":1}},"arguments":{"k":[1,{"x":"\\"}]},"name":"w"}}`, `{"k":[1,{"x":"\\"}]}`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"w","arguments":{"n":-1.5e3,"t":true,"z":null}}}`, `{"n":-1.5e3,"t":true,"z":null}`},
		{`{"method":"tools/list","params":{"arguments":{}}}`, ""},
		{`{"method":"tools/call","params":{"arguments":"text"}}`, ""},
		{`{"method":"tools/call","params":{"arguments":{},"arguments":{}}}`, ""},
		{`{"method":"tools/call","method":"tools/call","params":{"arguments":{}}}`, ""},
		{`{"method":"tools/call","params":{"argum\u0065nts":{}}}`, ""},
		{`{"method":"tools\/call","params":{"arguments":{}}}`, ""},
		{`[{"method":"tools/call","params":{"arguments":{}}}]`, ""},
		{`{"method":"tools/call"}`, ""},
		{`{"method":"tools/call","params":[]}`, ""},
	} {
		start, end, ok := callArguments([]byte(tc.msg))
		got := ""
		if ok {
			got = tc.msg[start:end]
		}
		if got != tc.want {
			t.Errorf("%s: found %q, want %q", tc.msg, got, tc.want)
		}
	}
}

// FuzzCallArguments: callArguments finds arguments only in what the SDK
// decodes as a call, and they are what encoding/json finds there.
func FuzzCallArguments(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"w","arguments":{"a":"\"}\\"}}}`)
	f.Add(`{"id":1,"method":"tools/call","params":{"arguments":{"x":[1,2,{"y":null}]},"name":"n"},"jsonrpc":"2.0"}`)
	f.Fuzz(func(t *testing.T, msg string) {
		if !json.Valid([]byte(msg)) {
			return
		}
		start, end, ok := callArguments([]byte(msg))
		if !ok {
			return
		}
		decoded, err := jsonrpc.DecodeMessage([]byte(msg))
		req, isReq := decoded.(*jsonrpc.Request)
		if err != nil || !isReq || req.Method != "tools/call" {
			t.Fatalf("found arguments in %s, which the SDK does not take as a call: %v", msg, err)
		}
		var params struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(req.Params, &params); err != nil {
			t.Fatal(err)
		}
		var got, want any
		if err := json.Unmarshal([]byte(msg[start:end]), &got); err != nil {
			t.Fatalf("found %q in %s: %v", msg[start:end], msg, err)
		}
		if err := json.Unmarshal(params.Arguments, &want); err != nil {
			t.Fatal(err)
		}
		if g, w := mustMarshal(t, got), mustMarshal(t, want); g != w {
			t.Fatalf("found %s in %s, want %s", g, msg, w)
		}
	})
}

func mustMarshal(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A diverted call's message keeps everything but its arguments, which
// restore gives back once; other arguments pass through restore unchanged.
func TestDivert(t *testing.T) {
	d := &diversions{held: map[string]json.RawMessage{}}
	d.allow(DefaultMaxMessage)
	args := `{"content":"` + strings.Repeat("x\\n", divertAbove) + `","file_path":"a"}`
	msg := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write","arguments":` + args + `,"_meta":{"progressToken":3}}}`
	small := d.divert([]byte(msg))
	prefix, suffix := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write","arguments":{"gordis.diverted":"`, `"},"_meta":{"progressToken":3}}}`
	if !strings.HasPrefix(string(small), prefix) || !strings.HasSuffix(string(small), suffix) || len(small) != len(prefix)+26+len(suffix) {
		t.Fatalf("diverted message %s", small)
	}
	placeholder := json.RawMessage(small[len(prefix)-len(`{"gordis.diverted":"`) : len(small)-len(`,"_meta":{"progressToken":3}}}`)])
	if got := d.restore(placeholder); string(got) != args {
		t.Fatalf("restored %d bytes, want the %d of the arguments", len(got), len(args))
	}
	if got := d.restore(placeholder); string(got) != string(placeholder) {
		t.Errorf("restored twice: %s", got)
	}
	if d.bytes != 0 || len(d.held) != 0 {
		t.Errorf("%d bytes held in %d after restore", d.bytes, len(d.held))
	}
	for _, args := range []string{`{"gordis.diverted":"unknown"}`, `{"file_path":"a"}`, `{}`} {
		if got := d.restore(json.RawMessage(args)); string(got) != args {
			t.Errorf("restore(%s) = %s", args, got)
		}
	}
	// Small arguments, and any beyond the limit, stay in the message.
	for _, msg := range []string{`{"method":"tools/call","params":{"arguments":{"a":1}}}`, msg} {
		d.limit = int64(len(args)) - 1
		if got := d.divert([]byte(msg)); string(got) != msg {
			t.Errorf("diverted %.80s", msg)
		}
	}
}

// BenchmarkDivert cuts the arguments out of a 64 MiB write's message: a
// byte scan, without allocating the arguments again.
func BenchmarkDivert(b *testing.B) {
	args := `{"file_path":"big.txt","content":"` + strings.Repeat(strings.Repeat("x", 63)+`\n`, 64<<20/64) + `"}`
	msg := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":` + args + `}}`)
	d := &diversions{held: map[string]json.RawMessage{}}
	d.allow(DefaultMaxMessage)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		small := d.divert(msg)
		if len(small) == len(msg) {
			b.Fatal("not diverted")
		}
		placeholder := small[bytes.Index(small, []byte(`{"gordis`)) : len(small)-len(`}}`)]
		if got := d.restore(placeholder); len(got) != len(args) {
			b.Fatalf("restored %d bytes, want %d", len(got), len(args))
		}
	}
}
