package rustregex

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAgainstRg runs the patterns below through the rg on this machine, if
// there is one, and compares the lines it reports with Match. The patterns
// use only what rg 13 and 14 read alike (not \<, \b{...} or the alternation
// rules regex-syntax 0.8 changed).
func TestAgainstRg(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("no rg on this machine")
	}
	lines := []string{"a foo", "foo-bar", "afoo", "x é", "xé", "é x", "éx", "Ω λ", "٣", "foo\r", "FOO",
		"straße", "STRASSE", "ǅ", "K", "k", "\u212a", "", " ", "\t", "a_b", "_", "ab12", "(foo)", "[x]",
		"a-b", "\u00a0", "x\u200dy", "Ⅻ", "ⓐ", "ß", "ẞ", "ſ", "s", "S", "--flag", "a.b", "a|b", "{}",
		"${x}", `\n`, "é\u0301", "日本語", "a\rb", "func (c *Conn) Close() error {", "ERROR: disk full"}
	patterns := []string{
		`foo`, `\bfoo\b`, `\bé`, `é\b`, `\Bé`, `\b\w+\b`, `\w+\B`, `^\w+$`, `^\W+$`, `\d`, `^\D+$`,
		`\s`, `^\S+$`, `\b.\b`, `.\b.`, `\S\B\S`, `\b\S+`, `\b\s*foo`, `x\b\S+`, `\S+\b-`,
		`(?i)straße`, `(?i)k`, `(?i)[^k]`, `(?i)s`, `(?i)ß`, `(?i)\p{Lu}`, `(?i)error`, `(?i:x)é`,
		`[a-z&&[^aeiou]]+`, `^[\w--\d]+$`, `[a-c~~b-d]`, `[[:alpha:]]`, `[[:^alpha:]]`, `[^\W\d_]`,
		`\p{Greek}`, `\p{L}{2}`, `\pN`, `\p{Lu}`, `\P{Ll}`, `\p{sc=Han}`, `\p{gc=Nd}`, `\p{Alphabetic}`,
		`\p{White_Space}`, `foo$`, `foo\r$`, `^$`, `^\s*$`, `\.`, `a\|b`, `\{\}`, `--flag`,
		`func \(\w+ \*\w+\) Close\(`, `(?:é|-)+`, `x?\bé`, `\b(?:foo|bar)\b`, `(\w)\w*\b-`,
	}
	file := filepath.Join(t.TempDir(), "lines.txt")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range patterns {
		out, err := exec.Command(rg, "-n", "--no-filename", "-e", p, file).Output()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() != 1 {
			t.Errorf("rg %q: %v", p, err)
			continue
		}
		var want []string
		for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			if n, _, ok := strings.Cut(l, ":"); ok {
				want = append(want, n)
			}
		}
		m, err := Compile(p)
		if err != nil {
			t.Errorf("Compile(%q): %v", p, err)
			continue
		}
		var got []string
		for i, l := range lines {
			if m.Match([]byte(l)) {
				got = append(got, strconv.Itoa(i+1))
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%q: rg reports lines %v, Match %v", p, want, got)
		}
	}
}
