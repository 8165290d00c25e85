package ignore

import (
	"errors"
	"strings"
	"testing"
)

// FuzzGlob: the parser never panics and refuses only with a GlobError; an
// accepted glob matches any path without panicking, and ripgrep's literal
// strategies and the shortcuts agree with the NFA.
func FuzzGlob(f *testing.F) {
	for _, s := range []string{"*.{ts,md}", "[ab].*", "!*.ts", "#x", "*.txt ", `\#x`, "src/*.ts", "a/**", "**/x", "a/**/b",
		"[", "*.{ts", "{a,{b,c}}", "[z-a]", `a\`, "}", "[!]]", "[é-ü]", "\xff[\xfe-a]", "{a\\,**}", "**/.git/**", strings.Repeat("?", 300)} {
		f.Add(s, "src/a.ts")
	}
	f.Fuzz(func(t *testing.T, glob, path string) {
		o, err := NewOverride(glob)
		if err != nil {
			var ge *GlobError
			if !errors.As(err, &ge) || !strings.HasPrefix(err.Error(), "error parsing glob '") {
				t.Fatalf("NewOverride(%q): %v", glob, err)
			}
			return
		}
		o.Match(path, false)
		o.Match(path, true)
		ParseGitignore("d", []byte(glob+"\n"+path)).Match("d/"+path, false)

		tokens, reason := parseGlob(glob)
		if reason != "" {
			return
		}
		m, c := compileGlob(tokens), newCandidate(path)
		got, want := m.match(&c), compileProgram(tokens).match(path)
		if c.base == "" && (m.how == sBaseLiteral || m.how == sExtension || m.how == sRequiredExt) {
			want = false // ripgrep's base-name strategies see no base name
		}
		if got != want {
			t.Fatalf("glob %q on %q: strategy %d, shortcuts %v = %v, NFA = %v", glob, path, m.how, m.cuts, got, want)
		}
	})
}
