package mcpclient

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestLineLogger(t *testing.T) {
	var out bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	w := &lineLogger{logger: logger}
	for _, chunk := range []string{"a\nb", "c\n\nd"} {
		if n, err := w.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", chunk, n, err)
		}
	}
	want := `level=INFO msg="mcp server stderr" line=a
level=INFO msg="mcp server stderr" line=bc
level=INFO msg="mcp server stderr" line=""
`
	if out.String() != want {
		t.Errorf("logged\n%s\nwant\n%s", out.String(), want)
	}
	if string(w.partial) != "d" {
		t.Errorf("pending %q, want %q", w.partial, "d")
	}
}

func TestTextOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  *mcp.CallToolResult
		want string
	}{
		{"texts", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "one"}, &mcp.TextContent{Text: "two"}}}, "one\ntwo"},
		{"image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: []byte("1234")}}}, "[image image/png, 4 bytes]"},
		{"audio", &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("12")}}}, "[audio audio/wav, 2 bytes]"},
		{"link", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: "file:///a"}}}, "[resource file:///a]"},
		{"embedded text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a", Text: "body"}}}}, "body"},
		{"embedded blob", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b", Blob: []byte{1}}}}}, "[resource file:///b]"},
		{"structured only", &mcp.CallToolResult{StructuredContent: map[string]int{"n": 1}}, `{"n":1}`},
		{"empty", &mcp.CallToolResult{}, ""},
	} {
		if got := textOf(tc.res); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestRemoteError(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		structured           any
		text                 string
		message, ename, code string
	}{
		{"gordis", map[string]string{"name": "FsError", "code": "FS_STALE_VERSION"}, "Error: stale", "stale", "FsError", "FS_STALE_VERSION"},
		{"plain", nil, "Error: ENOENT: no such file", "ENOENT: no such file", NameRemote, CodeRemote},
		{"no prefix", nil, "it broke", "it broke", NameRemote, CodeRemote},
		{"other structure", []int{1}, "Error: x", "x", NameRemote, CodeRemote},
	} {
		e := remoteError(&mcp.CallToolResult{IsError: true, StructuredContent: tc.structured}, tc.text)
		if e.Error() != tc.message || e.Name() != tc.ename || e.ErrorCode() != tc.code {
			t.Errorf("%s: %q %q %q, want %q %q %q", tc.name, e.Error(), e.Name(), e.ErrorCode(), tc.message, tc.ename, tc.code)
		}
	}
}

// TestRawSchemasRecord: a listed schema is kept as sent, key order
// included; a malformed result changes nothing.
func TestRawSchemasRecord(t *testing.T) {
	s := newRawSchemas()
	s.record([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"z":{},"a":{}}}}]}`))
	s.record([]byte(`not json`))
	if got := string(s.get("a")); got != `{"type":"object","properties":{"z":{},"a":{}}}` {
		t.Errorf("a = %s", got)
	}
	if got := s.get("b"); got != nil {
		t.Errorf("b = %s, want nothing", got)
	}
}

// FuzzLineLogger: however the stream is cut into writes, the records are
// its complete lines, in order, and the rest stays pending.
func FuzzLineLogger(f *testing.F) {
	f.Add("a\nbc\n\nd", uint8(1))
	f.Add("no newline", uint8(3))
	f.Fuzz(func(t *testing.T, stream string, cut uint8) {
		var lines []string
		logger := slog.New(recordLines{&lines})
		w := &lineLogger{logger: logger}
		step := int(cut%7) + 1
		for i := 0; i < len(stream); i += step {
			w.Write([]byte(stream[i:min(i+step, len(stream))]))
		}
		want := pieces(strings.Split(stream, "\n"))
		pending := want[len(want)-1]
		want = want[:len(want)-1]
		if !slices.Equal(lines, want) || string(w.partial) != pending {
			t.Errorf("lines %q pending %q, want %q %q", lines, w.partial, want, pending)
		}
	})
}

// pieces cuts each line longer than maxLine into pieces of maxLine bytes,
// the last of which may be shorter.
func pieces(lines []string) []string {
	var out []string
	for _, line := range lines {
		for len(line) > maxLine {
			out = append(out, line[:maxLine])
			line = line[maxLine:]
		}
		out = append(out, line)
	}
	return out
}

// A stream without newlines is logged in pieces of maxLine bytes, and no
// more than a piece stays pending, however long the stream runs.
func TestLineLoggerLongLine(t *testing.T) {
	var lines []string
	w := &lineLogger{logger: slog.New(recordLines{&lines})}
	chunk := bytes.Repeat([]byte("progress 42%\r"), 300)
	for range 100 {
		w.Write(chunk)
		if len(w.partial) > maxLine {
			t.Fatalf("%d bytes pending, want at most %d", len(w.partial), maxLine)
		}
	}
	w.Write([]byte("done\n"))
	stream := strings.Repeat(string(chunk), 100) + "done"
	want := pieces([]string{stream})
	if !slices.Equal(lines, want) {
		t.Fatalf("%d records, want %d", len(lines), len(want))
	}
	if len(lines) < 2 || len(lines[0]) != maxLine || len(w.partial) != 0 {
		t.Fatalf("records of %d bytes, pending %d", len(lines[0]), len(w.partial))
	}
}

// recordLines is a slog handler that keeps the "line" attribute.
type recordLines struct{ lines *[]string }

func (recordLines) Enabled(context.Context, slog.Level) bool { return true }
func (h recordLines) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "line" {
			*h.lines = append(*h.lines, a.Value.String())
		}
		return true
	})
	return nil
}
func (h recordLines) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordLines) WithGroup(string) slog.Handler      { return h }
