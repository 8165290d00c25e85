package toolsearch

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/unicode"

	"github.com/gordis-run/gordis/plugins/toolsearch/internal/rustregex"
)

// Decision 10: both tools only read, so they are parallel-safe.
func TestDefinitionsParallel(t *testing.T) {
	defs, err := (&toolset{cfg: Config{GlobMaxResults: 1, GrepMaxMatches: 1, GrepMaxLineBytes: 1, RawOutputMaxBytes: 1, TimeoutMs: 1}}).definitions()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		if d.ConcurrencySafe == nil || !d.ConcurrencySafe(nil) {
			t.Errorf("%s is exclusive", d.Name)
		}
	}
}

// S-017: only a comma outside every brace makes a list.
func TestTopLevelComma(t *testing.T) {
	for glob, want := range map[string]bool{
		"*.ts,*.js": true, "a},b": true, "}},a": true, ",": true,
		"*.{ts,tsx}": false, "{a,{b,c}}": false, "{a,b": false, "x": false,
	} {
		if got := hasTopLevelComma(glob); got != want {
			t.Errorf("%q: %v", glob, got)
		}
	}
}

// S-030: the top-level entry below a root, for each way a root is spelled.
func TestTopLevel(t *testing.T) {
	for _, c := range []struct{ path, root, want string }{
		{"a.txt", ".", "a.txt"},
		{"src/b.ts", ".", "src"},
		{"./src/b.ts", ".", "src"},
		{"src/x/b.ts", "src", "x"},
		{"src/b.ts", "src/", "b.ts"},
		{"src/b.ts", "src//", "b.ts"},
		{"a.txt", "a.txt", ""},
		{"./src/x/y", "./src", "x"},
		{"/abs/out/x", "/abs/out", "x"},
	} {
		if got := topLevel(c.path, c.root); got != c.want {
			t.Errorf("topLevel(%q, %q) = %q, want %q", c.path, c.root, got, c.want)
		}
	}
}

// S-044: a long line is cut at a byte budget, never inside a character.
func TestPreview(t *testing.T) {
	x2000 := strings.Repeat("x", 2000)
	for _, c := range []struct{ line, want string }{
		{x2000, x2000},
		{x2000 + "y", x2000 + " (line truncated)"},
		{strings.Repeat("a", 1999) + "é" + "tail", strings.Repeat("a", 1999) + " (line truncated)"},
		{strings.Repeat("a", 1998) + "é" + "tail", strings.Repeat("a", 1998) + "é (line truncated)"},
		{"", ""},
	} {
		if got := preview(c.line, 2000); got != c.want {
			t.Errorf("preview(%.20q…) = %.40q…", c.line, got)
		}
	}
}

// S-043: matches are grouped by path in order of first appearance, so a
// path that comes back joins its first group; the header counts them all.
func TestRenderGrepGroups(t *testing.T) {
	r := &GrepResult{Matches: []GrepMatch{
		{Path: "a.txt", LineNumber: 1, Line: "x"},
		{Path: "b.txt", LineNumber: 2, Line: "y"},
		{Path: "a.txt", LineNumber: 3, Line: "z"},
	}}
	want := "Found 3 matches\n\na.txt\nLine 1: x\nLine 3: z\n\nb.txt\nLine 2: y"
	if got := renderGrep(250, 2000)(r); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	want = "Found 2 of 3 matches\n\na.txt\nLine 1: x\n\nb.txt\nLine 2: y\n\n(The complete result could not be saved; narrow pattern, path, or include to see more.)"
	if got := renderGrep(2, 2000)(r); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// FuzzScan checks the chunked scan against the line model read one line
// at a time (S-035..S-037): whatever the buffer size, lines longer than
// it, CRLF, BOMs and NULs, the same lines come back with the same numbers.
func FuzzScan(f *testing.F) {
	for _, seed := range []string{"a\nb\n", "a\r\nxa\r", "\xEF\xBB\xBFab\n", "\xFF\xFEa\x00\n\x00", "\xFE\xFF\x00a", "aa\x00", "\n\n\na", "a\xffb\nc"} {
		f.Add([]byte(seed), uint8(0), uint8(3))
	}
	var matchers []*rustregex.Matcher
	for _, p := range []string{"a", "a$", "^$", `\r$`, "b|^x", `\w\w`} {
		m, err := compile(p)
		if err != nil {
			f.Fatal(err)
		}
		matchers = append(matchers, m)
	}
	f.Fuzz(func(t *testing.T, data []byte, pattern, size uint8) {
		m := matchers[int(pattern)%len(matchers)]
		j := &fileJob{}
		sc := scanner{m: m, raw: true, maxBytes: 1 << 40}
		binary, err := sc.read(context.Background(), bytes.NewReader(data), j, make([]byte, 4+int(size)%64))
		if err != nil {
			t.Fatal(err)
		}
		text := data
		switch {
		case bytes.HasPrefix(text, bomUTF8):
			text = text[3:]
		case bytes.HasPrefix(text, bomUTF16LE), bytes.HasPrefix(text, bomUTF16BE):
			order := unicode.LittleEndian
			if text[0] == 0xFE {
				order = unicode.BigEndian
			}
			text, _ = unicode.UTF16(order, unicode.IgnoreBOM).NewDecoder().Bytes(text[2:])
		}
		if wantBinary := bytes.IndexByte(text, 0) >= 0; binary != wantBinary {
			t.Fatalf("binary %v, want %v", binary, wantBinary)
		}
		var want []foundLine
		if !binary {
			lines := bytes.Split(text, []byte{'\n'})
			for i, l := range lines {
				last := i == len(lines)-1
				if last && len(l) == 0 {
					break
				}
				if !m.Match(l) {
					continue
				}
				if !last {
					l = bytes.TrimSuffix(l, []byte{'\r'})
				}
				s := invalidLine
				if utf8.Valid(l) {
					s = string(l)
				}
				want = append(want, foundLine{number: i + 1, text: s})
			}
		}
		if !binary && !slices.Equal(j.lines, want) { // file() drops a binary file's lines
			t.Fatalf("%q: got %+v, want %+v", data, j.lines, want)
		}
	})
}
