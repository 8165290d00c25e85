package ignore

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// toRegexp writes tokens as the regex ripgrep compiles them to, in Go's
// syntax. It is exact for ASCII globs and paths, where a byte is a rune.
func toRegexp(tokens []token) string {
	if len(tokens) == 1 && tokens[0].kind == tRecPrefix {
		return `(?s)^.*$`
	}
	var sb strings.Builder
	var seq func([]token)
	seq = func(ts []token) {
		for _, t := range ts {
			switch t.kind {
			case tLiteral:
				sb.WriteString(regexp.QuoteMeta(t.lit))
			case tAny:
				sb.WriteString(`[^/]`)
			case tStar:
				sb.WriteString(`[^/]*`)
			case tRecPrefix:
				sb.WriteString(`(?:/?|.*/)`)
			case tRecSuffix:
				sb.WriteString(`/.*`)
			case tRecMiddle:
				sb.WriteString(`(?:/|/.*/)`)
			case tClass:
				sb.WriteString(`[`)
				for b := range 128 {
					if t.class.has(byte(b)) {
						fmt.Fprintf(&sb, `\x{%x}`, b)
					}
				}
				sb.WriteString(`\x{10FFFF}]`) // never empty
			case tAlternates:
				var parts []string
				for _, alt := range t.alts {
					if len(alt) == 0 {
						continue
					}
					outer := sb
					sb = strings.Builder{}
					seq(alt)
					parts = append(parts, sb.String())
					sb = outer
				}
				if len(parts) > 0 {
					sb.WriteString(`(?:` + strings.Join(parts, "|") + `)`)
				}
			}
		}
	}
	seq(tokens)
	return `(?s)^` + sb.String() + `$`
}

func randomString(r *rand.Rand, alphabet string, max int) string {
	n := r.IntN(max + 1)
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// TestMatcherAgreesWithRegex checks every strategy, shortcut and the NFA
// against the regex ripgrep would build, on random ASCII globs and paths.
func TestMatcherAgreesWithRegex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	paths := make([]string, 400)
	for i := range paths {
		paths[i] = randomString(r, "ab/./", 8)
	}
	globs := []string{"**", "**/a", "a/**", "**/*.b", "*.b", "a*b", "a/*.b", "**/a/**/*", "a/**/*", "{a,b}/*", "[!a]*", "**/a.b", "**/*a.b", "*.{b,ab}", "{a,b/**}", "{**/a,b}", "{a,}", "{**/}", "a/{b,.a}/**/*", "**/.a/**/*", "{a,b}{a,b}{a,b}{a,b}"}
	for range 3000 {
		globs = append(globs, randomString(r, "ab/.*?*[]!-{},\\", 9))
	}
	tested := 0
	for _, g := range globs {
		tokens, reason := parseGlob(g)
		if reason != "" {
			continue
		}
		tested++
		re := regexp.MustCompile(toRegexp(tokens))
		m := compileGlob(tokens)
		for _, p := range paths {
			want := re.MatchString(p)
			if strings.HasSuffix(p, ".") || p == "" {
				// ripgrep's base-name strategies see no base name here.
				if m.how == sBaseLiteral || m.how == sExtension || m.how == sRequiredExt {
					want = false
				}
			}
			c := newCandidate(p)
			if got := m.match(&c); got != want {
				t.Fatalf("glob %q (strategy %d, shortcuts %v, regex %s) on %q = %v, want %v", g, m.how, m.cuts, re, p, got, want)
			}
		}
	}
	if tested < 1000 {
		t.Fatalf("only %d globs parsed", tested)
	}
}

// TestLargeProgram runs a glob too large for the dense tables.
func TestLargeProgram(t *testing.T) {
	glob := "[a]" + strings.Repeat("?", 300) + "*{x,y}"
	tokens, reason := parseGlob(glob)
	if reason != "" {
		t.Fatal(reason)
	}
	m := compileGlob(tokens)
	if m.prog == nil || m.prog.nodes == nil {
		t.Fatal("want the sparse program")
	}
	re := regexp.MustCompile(toRegexp(tokens))
	for _, p := range []string{"a" + strings.Repeat("b", 300) + "x", "a" + strings.Repeat("b", 305) + "y", "a" + strings.Repeat("b", 299) + "x", "a" + strings.Repeat("b", 300) + "/x", "b" + strings.Repeat("b", 300) + "x"} {
		c := newCandidate(p)
		if got, want := m.match(&c), re.MatchString(p); got != want {
			t.Errorf("len %d: got %v, want %v", len(p), got, want)
		}
	}
}
