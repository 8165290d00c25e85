package toolsearch_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/plugins/toolsearch"
)

// Section E, S-033/S-034/S-042: what grep visits, by ripgrep's default
// filters and the include override.
func TestGrepSelection(t *testing.T) {
	both(t, func(t *testing.T, p provider) {
		e := setup(t, options{provider: p})
		e.write(t, map[string]string{
			"a.txt":                  "needle a\n",
			".hidden.txt":            "needle hidden\n",
			".hdir/x.txt":            "needle hdir\n",
			".env":                   "needle env\n",
			"nogit/.gitignore":       "*.txt\n",
			"nogit/n.txt":            "needle not a repo\n",
			"repo/.git/HEAD":         "needle git head\n",
			"repo/.git/info/exclude": "excl.txt\n",
			"repo/.gitignore":        "gen.ts\ndist/\n/anch.txt\n*.log\n!keep.log\n",
			"repo/gen.ts":            "needle gen\n",
			"repo/src.ts":            "needle src\n",
			"repo/dist/x.ts":         "needle dist\n",
			"repo/anch.txt":          "needle anchored\n",
			"repo/sub/anch.txt":      "needle sub anchored\n",
			"repo/excl.txt":          "needle excluded\n",
			"repo/a.log":             "needle log\n",
			"repo/keep.log":          "needle keep\n",
			"repo/sub/.gitignore":    "!gen.ts\n",
			"repo/sub/gen.ts":        "needle sub gen\n",
			"repo/sub/x.md":          "needle md\n",
			"repo/.ignore":           "*.md\n",
			"repo/.rgignore":         "!x.md\n",
			"repo/subm/.git":         "gitdir: ../.git/modules/subm\n",
			"repo/subm/.gitignore":   "m.txt\n",
			"repo/subm/m.txt":        "needle submodule ignored\n",
			"repo/subm/o.txt":        "needle submodule kept\n",
			"ig/.ignore":             "*.txt\n",
			"ig/i.txt":               "needle dot-ignore\n",
			"ig/.rgignore":           "!r.txt\n",
			"ig/r.txt":               "needle rgignore wins\n",
		})
		e.symlink(t, "a.txt", "link.txt")
		e.symlink(t, "repo", "linkdir")
		m := func(path, line string) string { return path + "\nLine 1: " + line }
		found := func(sections ...string) string {
			n := len(sections)
			head := fmt.Sprintf("Found %d matches", n)
			if n == 1 {
				head = "Found 1 match"
			}
			return head + "\n\n" + strings.Join(sections, "\n\n")
		}
		check(t, e, p, []row{
			{name: "S-033 default filters", tool: "grep", args: args{"pattern": "needle"}, want: found(
				m("a.txt", "needle a"),
				m("ig/r.txt", "needle rgignore wins"),
				m("nogit/n.txt", "needle not a repo"),
				m("repo/keep.log", "needle keep"),
				m("repo/src.ts", "needle src"),
				m("repo/sub/anch.txt", "needle sub anchored"),
				m("repo/sub/gen.ts", "needle sub gen"),
				m("repo/sub/x.md", "needle md"),
				m("repo/subm/o.txt", "needle submodule kept"),
			)},
			{name: "S-033 ancestors' ignore files apply below", tool: "grep", args: args{"pattern": "needle", "path": "repo/sub"}, want: found(
				m("repo/sub/anch.txt", "needle sub anchored"),
				m("repo/sub/gen.ts", "needle sub gen"),
				m("repo/sub/x.md", "needle md"),
			)},
			{name: "S-033 ignored directory root is searched", tool: "grep", args: args{"pattern": "needle", "path": "repo/dist"}, want: found(m("repo/dist/x.ts", "needle dist"))},
			{name: "S-033 .git is only hidden", tool: "grep", args: args{"pattern": "needle", "path": "repo/.git"}, want: found(m("repo/.git/HEAD", "needle git head"))},
			{name: "S-033 hidden directory root", tool: "grep", args: args{"pattern": "needle", "path": ".hdir"}, want: found(m(".hdir/x.txt", "needle hdir"))},
			{name: "S-033 symlinked root is followed", tool: "grep", args: args{"pattern": "needle src", "path": "linkdir"}, want: found(m("linkdir/src.ts", "needle src"))},
			{name: "S-034 include selects hidden and ignored files", tool: "grep", args: args{"pattern": "needle", "include": "*.ts"}, want: found(
				m("repo/gen.ts", "needle gen"),
				m("repo/src.ts", "needle src"),
				m("repo/sub/gen.ts", "needle sub gen"),
			)},
			{name: "S-034 include descends a hidden directory it matches", tool: "grep", args: args{"pattern": "needle", "include": "{.hdir,x.txt}"}, want: found(m(".hdir/x.txt", "needle hdir"))},
			{name: "S-034 an unmatched directory keeps the normal rules", tool: "grep", args: args{"pattern": "needle", "include": ".hdir/**"},
				want: "Error: grep search failed (exit 2): rg: No files were searched, which means ripgrep probably applied a filter you didn't expect.\nRunning with --debug will show why files are being skipped.", code: toolsearch.CodeFailed},
			{name: "S-034 include of a hidden file", tool: "grep", args: args{"pattern": "needle", "include": ".env"}, want: found(m(".env", "needle env"))},
			{name: "S-034 include star searches everything", tool: "grep", args: args{"pattern": "needle (git|env|hdir|dist)", "include": "*"}, want: found(
				m(".env", "needle env"),
				m(".hdir/x.txt", "needle hdir"),
				m("repo/.git/HEAD", "needle git head"),
				m("repo/dist/x.ts", "needle dist"),
			)},
			{name: "S-034 include anchored at the workspace", tool: "grep", args: args{"pattern": "needle", "include": "repo/*.ts", "path": "repo"}, want: found(
				m("repo/gen.ts", "needle gen"),
				m("repo/src.ts", "needle src"),
			)},
			{name: "S-042 include matching nothing", tool: "grep", args: args{"pattern": "needle", "include": "*.zzz"},
				want: "Error: grep search failed (exit 2): rg: No files were searched, which means ripgrep probably applied a filter you didn't expect.\nRunning with --debug will show why files are being skipped.", code: toolsearch.CodeFailed},
			{name: "S-042 with a path it is empty", tool: "grep", args: args{"pattern": "needle", "include": "*.zzz", "path": "."}, want: "No matches found"},
			{name: "S-041 invalid include", tool: "grep", args: args{"pattern": "needle", "include": "["},
				want: "Error: grep pattern rejected by ripgrep: rg: error parsing glob '[': unclosed character class; missing ']'", code: toolsearch.CodeInvalidPattern},
			{name: "S-041 unclosed alternation", tool: "grep", args: args{"pattern": "needle", "include": "*.{a,b"},
				want: "Error: grep pattern rejected by ripgrep: rg: error parsing glob '*.{a,b': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)", code: toolsearch.CodeInvalidPattern},
		})
	})
}

// S-042: nothing searched is an error only without a path; a binary file
// counts as searched.
func TestGrepNothingSearched(t *testing.T) {
	const noFiles = "Error: grep search failed (exit 2): rg: No files were searched, which means ripgrep probably applied a filter you didn't expect.\nRunning with --debug will show why files are being skipped."
	both(t, func(t *testing.T, p provider) {
		empty := setup(t, options{provider: p})
		check(t, empty, p, []row{
			{name: "empty workspace", tool: "grep", args: args{"pattern": "x"}, want: noFiles, code: toolsearch.CodeFailed},
			{name: "empty workspace with path", tool: "grep", args: args{"pattern": "x", "path": "."}, want: "No matches found"},
		})
		hidden := setup(t, options{provider: p})
		hidden.write(t, map[string]string{".a": "x\n", ".gitignore": "b\n", "b": "x\n"})
		hidden.mkdir(t, ".git")
		check(t, hidden, p, []row{{name: "only hidden and ignored", tool: "grep", args: args{"pattern": "x"}, want: noFiles, code: toolsearch.CodeFailed}})
		dir := setup(t, options{provider: p})
		dir.mkdir(t, "empty")
		check(t, dir, p, []row{{name: "S-047 an explicit root that holds nothing", tool: "grep", args: args{"pattern": "x", "path": "empty"}, want: "No matches found"}})
		bin := setup(t, options{provider: p})
		bin.write(t, map[string]string{"b.bin": "x\x00y\n"})
		check(t, bin, p, []row{{name: "a binary file counts as searched", tool: "grep", args: args{"pattern": "x"}, want: "No matches found"}})
	})
}

// S-035..S-037, S-043..S-048: contents, lines, format and order.
func TestGrepContents(t *testing.T) {
	x2000 := strings.Repeat("x", 2000)
	utf16le := func(s string) string {
		b := []byte{0xFF, 0xFE}
		for _, r := range s {
			b = append(b, byte(r), byte(r>>8))
		}
		return string(b)
	}
	utf16be := func(s string) string {
		b := []byte{0xFE, 0xFF}
		for _, r := range s {
			b = append(b, byte(r>>8), byte(r))
		}
		return string(b)
	}
	both(t, func(t *testing.T, p provider) {
		e := setup(t, options{provider: p})
		e.write(t, map[string]string{
			"fmt/a.txt":      "needle one\nx\nneedle two\n",
			"fmt/src/b.ts":   "x\nconst needle = 1\n",
			"one/a.txt":      "hit\n",
			"bin/early.txt":  "hit\n" + "\x00" + "\n",
			"bin/late.txt":   "hit\n" + strings.Repeat("y\n", 40000) + "\x00\n",
			"bin/text.txt":   "hit text\n",
			"enc/bom.txt":    "\xEF\xBB\xBFneedle first\nneedle second\n",
			"enc/le.txt":     utf16le("first\nneedle le\r\nthird needle\n"),
			"enc/be.txt":     utf16be("needle be\n"),
			"enc/nobom.txt":  "n\x00e\x00e\x00d\x00l\x00e\x00",
			"enc/latin1.txt": "caf\xe9 needle\n",
			"ln/crlf.txt":    "foo\r\na\rfoo b\nlast foo\r",
			"ln/empty.txt":   "a\n\nb\n",
			"ln/multi.txt":   "foo foo foo\n",
			"ln/nonl.txt":    "x\nfoo end",
			"ln/bad.txt":     "ok\nfoo \xff\xfe\n",
			"long/l.txt":     x2000 + "x\n" + x2000 + "\n" + strings.Repeat("a", 1999) + "é\n",
		})
		check(t, e, p, []row{
			{name: "S-043 format", tool: "grep", args: args{"pattern": "needle", "path": "fmt"},
				want: "Found 3 matches\n\nfmt/a.txt\nLine 1: needle one\nLine 3: needle two\n\nfmt/src/b.ts\nLine 2: const needle = 1"},
			{name: "S-043 singular", tool: "grep", args: args{"pattern": "hit", "path": "one"}, want: "Found 1 match\n\none/a.txt\nLine 1: hit"},
			{name: "S-035 binary files skipped", tool: "grep", args: args{"pattern": "hit", "path": "bin"}, want: "Found 1 match\n\nbin/text.txt\nLine 1: hit text"},
			{name: "S-035 explicit binary root searched whole", tool: "grep", args: args{"pattern": "hit|\x00", "path": "bin/early.txt"}, want: "Found 2 matches\n\nbin/early.txt\nLine 1: hit\nLine 2: \x00",
				skipGeneric: "StreamText refuses a binary file"},
			{name: "S-036 UTF-8 BOM dropped", tool: "grep", args: args{"pattern": "^needle", "path": "enc/bom.txt"}, want: "Found 2 matches\n\nenc/bom.txt\nLine 1: needle first\nLine 2: needle second"},
			{name: "S-036 UTF-16LE transcoded", tool: "grep", args: args{"pattern": "needle", "path": "enc/le.txt"}, want: "Found 2 matches\n\nenc/le.txt\nLine 2: needle le\nLine 3: third needle",
				skipGeneric: "StreamText refuses UTF-16 (NUL bytes)"},
			{name: "S-036 UTF-16BE transcoded", tool: "grep", args: args{"pattern": "needle", "path": "enc/be.txt"}, want: "Found 1 match\n\nenc/be.txt\nLine 1: needle be",
				skipGeneric: "StreamText refuses UTF-16 (NUL bytes)"},
			{name: "S-036 UTF-16 in a walk", tool: "grep", args: args{"pattern": "needle", "path": "enc"},
				want:        "Found 6 matches\n\nenc/be.txt\nLine 1: needle be\n\nenc/bom.txt\nLine 1: needle first\nLine 2: needle second\n\nenc/latin1.txt\nLine 1: (line is not valid UTF-8)\n\nenc/le.txt\nLine 2: needle le\nLine 3: third needle",
				skipGeneric: "StreamText refuses UTF-16 and Latin-1 text"},
			{name: "S-037 CRLF, lone CR, final CR", tool: "grep", args: args{"pattern": "foo", "path": "ln/crlf.txt"},
				want: "Found 3 matches\n\nln/crlf.txt\nLine 1: foo\nLine 2: a\rfoo b\nLine 3: last foo\r"},
			{name: "S-037 dollar before CR misses", tool: "grep", args: args{"pattern": "foo$", "path": "ln/crlf.txt"}, want: "No matches found"},
			{name: "S-037 CR dollar matches", tool: "grep", args: args{"pattern": `foo\r$`, "path": "ln/crlf.txt"}, want: "Found 2 matches\n\nln/crlf.txt\nLine 1: foo\nLine 3: last foo\r"},
			{name: "S-037 empty line", tool: "grep", args: args{"pattern": "^$", "path": "ln/empty.txt"}, want: "Found 1 match\n\nln/empty.txt\nLine 2: "},
			{name: "S-037 one result per line", tool: "grep", args: args{"pattern": "foo", "path": "ln/multi.txt"}, want: "Found 1 match\n\nln/multi.txt\nLine 1: foo foo foo"},
			{name: "S-037 last line without newline", tool: "grep", args: args{"pattern": "end$", "path": "ln/nonl.txt"}, want: "Found 1 match\n\nln/nonl.txt\nLine 2: foo end"},
			{name: "S-037 invalid UTF-8 line", tool: "grep", args: args{"pattern": "foo", "path": "ln/bad.txt"}, want: "Found 1 match\n\nln/bad.txt\nLine 2: (line is not valid UTF-8)",
				skipGeneric: "StreamText refuses invalid UTF-8"},
			{name: "S-044 preview", tool: "grep", args: args{"pattern": "^[xa]", "path": "long"},
				want: "Found 3 matches\n\nlong/l.txt\nLine 1: " + x2000 + " (line truncated)\nLine 2: " + x2000 + "\nLine 3: " + strings.Repeat("a", 1999) + " (line truncated)"},
			{name: "S-047 empty", tool: "grep", args: args{"pattern": "zzz", "path": "fmt"}, want: "No matches found"},
		})
		// S-035: a root with a NUL after the first 64 KiB is searched whole.
		want(t, e.call("grep", args{"pattern": "hit", "path": "bin/late.txt"}), "Found 1 match\n\nbin/late.txt\nLine 1: hit", "")
		// S-043, S-044, S-054: the value keeps whole lines, in flat order.
		r := e.call("grep", args{"pattern": "^[xa]", "path": "long"})
		v := value[toolsearch.GrepResult](t, r)
		if len(v.Matches) != 3 || v.Matches[0] != (toolsearch.GrepMatch{Path: "long/l.txt", LineNumber: 1, Line: x2000 + "x"}) {
			t.Errorf("S-044 value %.200v", v)
		}
		r = e.call("grep", args{"pattern": "zzz", "path": "fmt"})
		if v := value[toolsearch.GrepResult](t, r); v.Matches == nil || len(v.Matches) != 0 {
			t.Errorf("S-047 value %+v", v)
		}
		if p == walker {
			r = e.call("grep", args{"pattern": "foo", "path": "ln/bad.txt"})
			if v := value[toolsearch.GrepResult](t, r); len(v.Matches) != 1 || v.Matches[0].Line != "(line is not valid UTF-8)" {
				t.Errorf("S-037 value %+v", v)
			}
		}
	})
}

// S-046: files in the walk's order, lines ascending.
func TestGrepOrder(t *testing.T) {
	both(t, func(t *testing.T, p provider) {
		e := setup(t, options{provider: p})
		e.write(t, map[string]string{"b.txt": "n\n", "a.txt": "n\n", "a/z.txt": "n\n", "a/a.txt": "n\n", "a/B/y.txt": "n\n",
			"_x.txt": "n\n", "A.txt": "n\n", "d.txt": "n\n", "d/x.txt": "n\nm\nn\n"})
		var want []string
		for _, f := range []string{"A.txt", "_x.txt", "a/B/y.txt", "a/a.txt", "a/z.txt", "a.txt", "b.txt", "d/x.txt", "d.txt"} {
			s := f + "\nLine 1: n"
			if f == "d/x.txt" {
				s += "\nLine 3: n"
			}
			want = append(want, s)
		}
		check(t, e, p, []row{{name: "walk order", tool: "grep", args: args{"pattern": "n"}, want: "Found 10 matches\n\n" + strings.Join(want, "\n\n")}})
	})
}

// S-045, S-054: over the cap, the first matches in flat order, a file cut
// mid-way, and a value with every match.
func TestGrepCap(t *testing.T) {
	const footer = "\n\n(The complete result could not be saved; narrow pattern, path, or include to see more.)"
	both(t, func(t *testing.T, p provider) {
		e := setup(t, options{provider: p})
		e.write(t, map[string]string{
			"a.txt":     strings.Repeat("hit\n", 200),
			"b.txt":     strings.Repeat("hit\n", 100),
			"exact.txt": strings.Repeat("hit\n", 250),
		})
		page := func(files ...[2]any) string {
			var s []string
			for _, f := range files {
				var b strings.Builder
				b.WriteString(f[0].(string))
				for i := 1; i <= f[1].(int); i++ {
					fmt.Fprintf(&b, "\nLine %d: hit", i)
				}
				s = append(s, b.String())
			}
			return strings.Join(s, "\n\n")
		}
		r := e.call("grep", args{"pattern": "hit", "path": ".", "include": "[ab].txt"})
		want(t, r, "Found 250 of 300 matches\n\n"+page([2]any{"./a.txt", 200}, [2]any{"./b.txt", 50})+footer, "")
		if v := value[toolsearch.GrepResult](t, r); len(v.Matches) != 300 || v.Matches[299] != (toolsearch.GrepMatch{Path: "./b.txt", LineNumber: 100, Line: "hit"}) {
			t.Errorf("S-054 value has %d matches", len(v.Matches))
		}
		want(t, e.call("grep", args{"pattern": "hit", "path": "exact.txt"}), "Found 250 matches\n\n"+page([2]any{"exact.txt", 250}), "")
		capped := setup(t, options{provider: p, config: toolsearch.Config{GrepMaxMatches: 1, GrepMaxLineBytes: 2}})
		capped.write(t, map[string]string{"a.txt": "hit\nhit\n"})
		want(t, capped.call("grep", args{"pattern": "hit"}), "Found 1 of 2 matches\n\na.txt\nLine 1: hi (line truncated)"+footer, "")
	})
}

// S-038..S-040: the regex dialect, and the refusals' texts and codes.
func TestGrepPatterns(t *testing.T) {
	both(t, func(t *testing.T, p provider) {
		e := setup(t, options{provider: p})
		e.write(t, map[string]string{
			"d.txt": "arabic ٣\nplain\n",
			"w.txt": "é\n",
			"x.txt": "baz\nxyz\nabc\n--flag here\n$(touch pwned) `x` ; |\n",
		})
		in := func(file string, n int, line string) string {
			return fmt.Sprintf("Found 1 match\n\n%s\nLine %d: %s", file, n, line)
		}
		check(t, e, p, []row{
			{name: "S-038 unicode digit", tool: "grep", args: args{"pattern": `\d`}, want: in("d.txt", 1, "arabic ٣")},
			{name: "S-038 unicode word", tool: "grep", args: args{"pattern": `^\w$`}, want: in("w.txt", 1, "é")},
			{name: "S-038 verbose mode", tool: "grep", args: args{"pattern": `(?x) b a z`}, want: in("x.txt", 1, "baz")},
			{name: "S-038 class intersection", tool: "grep", args: args{"pattern": `^[a-z&&[^aeiou]]+$`}, want: in("x.txt", 2, "xyz")},
			{name: "S-038 leading dash is a pattern", tool: "grep", args: args{"pattern": "--flag"}, want: in("x.txt", 4, "--flag here")},
			{name: "S-038 shell metacharacters are inert", tool: "grep", args: args{"pattern": "$(touch pwned)"}, want: "No matches found"},
			{name: "S-038 quotes and backticks are literal", tool: "grep", args: args{"pattern": "`x` ; [|]"}, want: in("x.txt", 5, "$(touch pwned) `x` ; |")},
			{name: "S-039 escaped newline", tool: "grep", args: args{"pattern": `a\nb`},
				want: "Error: grep search failed (exit 2): rg: the literal \"\\n\" is not allowed in a regex\n\nConsider enabling multiline mode with the --multiline flag (or -U for short).\nWhen multiline mode is enabled, new line characters can be matched.", code: toolsearch.CodeFailed},
			{name: "S-039 real newline", tool: "grep", args: args{"pattern": "a\nb"},
				want: "Error: grep search failed (exit 2): rg: the literal \"\\n\" is not allowed in a regex\n\nConsider enabling multiline mode with the --multiline flag (or -U for short).\nWhen multiline mode is enabled, new line characters can be matched.", code: toolsearch.CodeFailed},
		})
		for _, c := range []struct{ pattern, reason string }{
			{"(", "unclosed group"},
			{"(?=x)", "look-around, including look-ahead and look-behind, is not supported"},
			{`\1`, "backreferences are not supported"},
			{`\Q`, "unrecognized escape sequence"},
			{"x{,3}", "repetition quantifier expects a valid decimal"},
			{"x{3,1}", "invalid repetition count range, the start must be <= the end"},
		} {
			r := e.call("grep", args{"pattern": c.pattern})
			if !r.IsError || !strings.HasPrefix(r.Text, "Error: grep pattern rejected by ripgrep: rg: regex parse error:\n    (?:"+c.pattern+")\n") ||
				!strings.Contains(r.Text, "error: "+c.reason) || r.Error.Code != toolsearch.CodeInvalidPattern || r.Error.Name != "SearchError" {
				t.Errorf("S-040 %q: %q %+v", c.pattern, r.Text, r.Error)
			}
		}
	})
}

// S-048: a name that is not valid UTF-8 shows U+FFFD for each bad byte,
// in glob's and grep's paths alike.
func TestInvalidUTF8Names(t *testing.T) {
	both(t, func(t *testing.T, p provider) {
		e := setup(t, options{provider: p})
		e.write(t, map[string]string{"bad\xffname.txt": "needle\n", "d\xfe/x.txt": "needle\n"})
		check(t, e, p, []row{
			{name: "grep", tool: "grep", args: args{"pattern": "needle"}, want: "Found 2 matches\n\nbad\uFFFDname.txt\nLine 1: needle\n\nd\uFFFD/x.txt\nLine 1: needle"},
			{name: "glob", tool: "glob", args: args{"pattern": "*.txt"}, want: "bad\uFFFDname.txt\nd\uFFFD/x.txt"},
		})
	})
}
