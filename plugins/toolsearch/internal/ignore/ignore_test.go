package ignore

import (
	"errors"
	"fmt"
	"testing"
)

func TestGlobErrors(t *testing.T) {
	tests := []struct{ glob, want string }{
		{"[", "error parsing glob '[': unclosed character class; missing ']'"},
		{"[]", "error parsing glob '[]': unclosed character class; missing ']'"},
		{"[!]", "error parsing glob '[!]': unclosed character class; missing ']'"},
		{"*.{ts", "error parsing glob '*.{ts': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)"},
		{"{a,b", "error parsing glob '{a,b': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)"},
		{"{a,{b,c}}", "error parsing glob '{a,{b,c}}': nested alternate groups are not allowed"},
		{"[z-a]", "error parsing glob '[z-a]': invalid range; 'z' > 'a'"},
		{`a\`, `error parsing glob 'a\': dangling '\'`},
		// The glob is the line after trailing whitespace goes, '!' included.
		{"!*.{ts  ", "error parsing glob '!*.{ts': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)"},
		{"src/[a", "error parsing glob 'src/[a': unclosed character class; missing ']'"},
	}
	for _, tt := range tests {
		_, err := NewOverride(tt.glob)
		var ge *GlobError
		if !errors.As(err, &ge) {
			t.Errorf("NewOverride(%q) = %v, want a *GlobError", tt.glob, err)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("NewOverride(%q):\n got %s\nwant %s", tt.glob, err, tt.want)
		}
	}
	// Later globs are not reached after an error; earlier ones do not hide it.
	if _, err := NewOverride("*.ts", "[", "{"); err == nil || err.Error() != "error parsing glob '[': unclosed character class; missing ']'" {
		t.Errorf("first error: %v", err)
	}
}

// accepted globs that look wrong but ripgrep 14.1.1 takes.
func TestGlobAccepted(t *testing.T) {
	for _, g := range []string{"}", "a}b", "{}", "{,}", "[]]", "[!]]", "[a-]", "[-a]", "a**b", "***", "**/", "/", "!", `\!x`, `\#x`, `x\ `, "[\\]", "{a,b}{c,d}"} {
		if _, err := NewOverride(g); err != nil {
			t.Errorf("NewOverride(%q) = %v, want accepted", g, err)
		}
	}
}

type probe struct {
	path  string
	isDir bool
	want  Match
}

func file(path string, want Match) probe { return probe{path, false, want} }
func dir(path string, want Match) probe  { return probe{path, true, want} }

func (p probe) String() string {
	if p.isDir {
		return p.path + "/"
	}
	return p.path
}

var W, I, N = Whitelist, Ignore, None

func TestOverride(t *testing.T) {
	tests := []struct {
		globs  []string
		probes []probe
	}{
		// S-026 examples.
		{[]string{"*.{ts,md}"}, []probe{file("a.ts", W), file("src/b.md", W), file("a.js", I), file("a.tsx", I), dir("src", N), dir("x.ts", W)}},
		{[]string{"[ab].*"}, []probe{file("a.txt", W), file("d/b.ts", W), file("c.txt", I), file("ab.txt", I)}},
		{[]string{"*.TS"}, []probe{file("a.ts", I), file("a.TS", W)}},
		{[]string{"!*.ts"}, []probe{file("a.ts", I), file("src/a.ts", I), file("a.js", N), dir("src", N), dir("x.ts", I)}},
		{[]string{"#x"}, []probe{file("a.ts", N), file("#x", N)}},
		{[]string{"*.txt "}, []probe{file("a.txt", W), file("a.txt ", I)}},
		{[]string{"*.txt\u0085"}, []probe{file("a.txt", W)}},
		{[]string{"\u0085"}, []probe{file("a.txt", N)}},
		{[]string{`*.txt\ `}, []probe{file("a.txt ", W), file("a.txt", I)}},
		{[]string{`\#x`}, []probe{file("#x", W), file("d/#x", W), file("x", I)}},
		{[]string{`\!x`}, []probe{file("!x", W), file("x", I)}},
		{[]string{" a.txt"}, []probe{file(" a.txt", W), file("a.txt", I)}},
		{[]string{"src/*.ts"}, []probe{file("src/a.ts", W), file("a.ts", I), file("x/src/a.ts", I), file("src/d/a.ts", I), dir("src", N)}},
		{[]string{"/a.ts"}, []probe{file("a.ts", W), file("d/a.ts", I)}},
		{[]string{"a/**"}, []probe{dir("a", N), file("a", I), file("a/x", W), file("a/b/c", W), dir("a/b", W), file("b/a/x", I)}},
		{[]string{"**/x"}, []probe{file("x", W), file("a/b/x", W), file("xx", I)}},
		{[]string{"a/**/b"}, []probe{file("a/b", W), file("a/x/y/b", W), file("a/xb", I), file("c/a/b", I)}},
		{[]string{"**"}, []probe{file("a", W), file("a/b/c", W), dir("a", W)}},
		{[]string{"a*b"}, []probe{file("ab", W), file("axxb", W), file("a/b", I), file("d/ab", W)}},
		{[]string{"a?c"}, []probe{file("abc", W), file("a/c", I), file("ac", I), file("aéc", I), file("a\xffc", W)}},
		{[]string{"a??c"}, []probe{file("aéc", W)}},
		{[]string{"[!ab]x"}, []probe{file("cx", W), file("ax", I), file("d/cx", W)}},
		{[]string{"[^ab]x"}, []probe{file("cx", W), file("bx", I)}},
		{[]string{"[a-c]x"}, []probe{file("bx", W), file("dx", I)}},
		{[]string{"[]]x", "[-]y", "[a-]z"}, []probe{file("]x", W), file("-y", W), file("-z", W), file("az", W), file("bz", I)}},
		// A negated class is a byte class: it spans '/'; a class of a
		// multi-byte character matches one of its bytes.
		{[]string{"/a[!x]b"}, []probe{file("a/b", W), file("axb", I)}},
		{[]string{"[é]"}, []probe{file("é", I), file("\xc3", W)}},
		{[]string{`\*`}, []probe{file("*", W), file("a", I)}},
		{[]string{"{a,b}"}, []probe{file("a", W), file("b", W), file("d/b", W), file("ab", I), file("", I)}},
		{[]string{"x{,.txt}"}, []probe{file("x.txt", W), file("x", I)}},
		{[]string{"a}b"}, []probe{file("ab", W), file("a}b", I)}},
		{[]string{"a,b"}, []probe{file("a,b", W), file("a", I)}},
		// A trailing '/' matches directories only; a directory name alone
		// lists nothing below it.
		{[]string{"src/"}, []probe{dir("src", W), file("src", I), file("src/a.ts", I), dir("d/src", W)}},
		{[]string{"src"}, []probe{dir("src", W), file("src/a.ts", I), file("src", W)}},
		// Last match wins; "!" ignores.
		{[]string{"*.ts", "!a.ts"}, []probe{file("b.ts", W), file("a.ts", I), file("c.js", I)}},
		{[]string{"!a.ts", "*.ts"}, []probe{file("a.ts", W)}},
		{[]string{"!a/"}, []probe{dir("a", I), file("a", N)}},
		// include "*" whitelists everything, hidden and VCS names too.
		{[]string{"*"}, []probe{file(".env", W), dir(".git", W), file(".git/HEAD", W), dir("a", W)}},
		// ripgrep's literal fast paths see no base name in a path ending in '.'.
		{[]string{"foo."}, []probe{file("foo.", I), file("d/foo.", I)}},
		{[]string{"*."}, []probe{file("a.", I)}},
		{[]string{"/a?b."}, []probe{file("a.b.", I)}},
		{[]string{"/f[o]o."}, []probe{file("foo.", I)}},
		{[]string{"f[o]o[.]"}, []probe{file("foo.", W)}},
		// A leading "./" is not part of the path.
		{[]string{"src/*.ts"}, []probe{file("./src/a.ts", W)}},
		{nil, []probe{file("a", N), dir("a", N)}},
	}
	for _, tt := range tests {
		o, err := NewOverride(tt.globs...)
		if err != nil {
			t.Fatalf("NewOverride(%q): %v", tt.globs, err)
		}
		for _, p := range tt.probes {
			if got := o.Match(p.path, p.isDir); got != p.want {
				t.Errorf("NewOverride(%q).Match(%v) = %v, want %v", tt.globs, p, got, p.want)
			}
		}
	}
}

func TestOverrideEmpty(t *testing.T) {
	for globs, want := range map[string]bool{"": true, "#x": true, "  ": true, "*.ts": false, "!x": false} {
		o, err := NewOverride(globs)
		if err != nil {
			t.Fatal(err)
		}
		if o.Empty() != want {
			t.Errorf("NewOverride(%q).Empty() = %v, want %v", globs, o.Empty(), want)
		}
	}
	var o *Override
	if !o.Empty() || o.Match("a", false) != None {
		t.Error("a nil Override must filter nothing")
	}
}

// The glob tool's list: the pattern, then the VCS exclusions (S-025).
func TestVCSExcludes(t *testing.T) {
	want := []string{"!**/.git", "!**/.git/**", "!**/.svn", "!**/.svn/**", "!**/.hg", "!**/.hg/**", "!**/.bzr", "!**/.bzr/**", "!**/.jj", "!**/.jj/**", "!**/.sl", "!**/.sl/**"}
	if got := VCSExcludes(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("VCSExcludes() = %q", got)
	}
	tests := []struct {
		pattern string
		probes  []probe
	}{
		{"*", []probe{dir(".git", I), file(".git", I), file("sub/.git", I), file(".git/HEAD", I), file("sub/.hg/store/x", I), dir(".github", W), file(".gitmodules", W), file("a.git", W), file(".gitx/a", W)}},
		{"#x", []probe{file("a", N), file(".git/config", I), dir(".jj", I)}},
		{"!*.ts", []probe{file("a.ts", I), file("a.js", N), file(".sl/a.js", I)}},
		{"*.ts", []probe{file("a.ts", W), file("a.js", I), dir("src", N), file(".bzr/a.ts", I), file("x/.svn/y/z.ts", I)}},
	}
	for _, tt := range tests {
		o, err := NewOverride(append([]string{tt.pattern}, VCSExcludes()...)...)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range tt.probes {
			if got := o.Match(p.path, p.isDir); got != p.want {
				t.Errorf("%q + VCS: Match(%v) = %v, want %v", tt.pattern, p, got, p.want)
			}
		}
	}
}

func TestGitignore(t *testing.T) {
	tests := []struct {
		dir, content string
		probes       []probe
	}{
		{"", "*.log\n!keep.log\n", []probe{file("a.log", I), file("d/a.log", I), file("keep.log", W), file("d/keep.log", W), file("a.txt", N)}},
		// A '/' other than trailing anchors at the file's directory.
		{"sub", "/gen.ts\nd/x\n", []probe{file("sub/gen.ts", I), file("sub/d/gen.ts", N), file("sub/d/x", I), file("sub/e/d/x", N)}},
		{"sub", "gen.ts\n", []probe{file("sub/gen.ts", I), file("sub/d/gen.ts", I)}},
		{"", "dist/\n", []probe{dir("dist", I), file("dist", N), dir("a/dist", I)}},
		{"", "build/**\n", []probe{dir("build", N), file("build/a", I), dir("build/x", I)}},
		{"", "# comment\n\n   \n\\#hash\n", []probe{file("# comment", N), file("#hash", I)}},
		// Lines ripgrep cannot parse are skipped; the rest apply.
		{"", "[\n*.o\n{a\n", []probe{file("x.o", I), file("[", N)}},
		// CRLF files, trailing spaces, and an escaped trailing space.
		{"", "a.txt\r\nb.txt  \r\nc\\ \n", []probe{file("a.txt", I), file("b.txt", I), file("c ", I), file("c", N)}},
		// The file ends at the first line that is not UTF-8.
		{"", "a\n\xff\nb\n", []probe{file("a", I), file("b", N)}},
		// No BOM handling in 14.1.1: the BOM is part of the first glob.
		{"", "\ufeffa\nb\n", []probe{file("a", N), file("\ufeffa", I), file("b", I)}},
		{"", "", []probe{file("a", N)}},
	}
	for _, tt := range tests {
		g := ParseGitignore(tt.dir, []byte(tt.content))
		for _, p := range tt.probes {
			if got := g.Match(p.path, p.isDir); got != p.want {
				t.Errorf("ParseGitignore(%q, %q).Match(%v) = %v, want %v", tt.dir, tt.content, p, got, p.want)
			}
		}
	}
}

// tree builds levels: dirs maps a directory ("" for the workspace) to its
// files, and level returns the state below any directory.
type tree map[string]Files

func (tr tree) level(dir string) *Level {
	l := Root()
	path := ""
	for i := 0; ; i++ {
		l = l.Child(path, tr[path])
		if path == dir {
			return l
		}
		next := dir
		if j := indexFrom(dir, len(path)+boolInt(path != "")); j >= 0 {
			next = dir[:j]
		}
		path = next
	}
}

func indexFrom(s string, from int) int {
	for i := from; i < len(s); i++ {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

type walkProbe struct {
	dir     string // the parent directory's level
	path    string
	isDir   bool
	ignored bool
}

func TestIgnored(t *testing.T) {
	repo := func(gitignore string) Files { return Files{GitIgnore: []byte(gitignore), Git: true} }
	tests := []struct {
		name    string
		tree    tree
		include string
		probes  []walkProbe
	}{
		{"hidden skipped", tree{}, "", []walkProbe{
			{"", ".env", false, true}, {"", ".hdir", true, true}, {"", "a.txt", false, false},
			{"d", "d/.x", false, true}, {"", ".git", true, true}, {"", ".gitignore", false, true},
			// As in ripgrep, a path ending in '.' has no name to judge.
			{"", ".a.", false, false},
		}},
		{"a search below sub still honours the workspace's files", tree{"": repo("*.gen\n"), "sub": {}}, "", []walkProbe{
			{"sub/a", "sub/a/x.gen", false, true}, {"sub", "sub/y.gen", false, true},
		}},
		{".gitignore outside a repository does nothing", tree{"": {GitIgnore: []byte("*.log\n")}}, "", []walkProbe{
			{"", "a.log", false, false}, {"d", "d/a.log", false, false},
		}},
		{".gitignore inside a repository", tree{"": repo("*.log\ndist/\n")}, "", []walkProbe{
			{"", "a.log", false, true}, {"d", "d/a.log", false, true}, {"", "dist", true, true}, {"", "dist", false, false},
		}},
		{"a .git file counts, and so does an ancestor's", tree{"": {Git: true}, "sub": {GitIgnore: []byte("x\n")}}, "", []walkProbe{
			{"sub", "sub/x", false, true}, {"sub/d", "sub/d/x", false, true},
		}},
		{".gitignore of a nested repository's parent does not reach into it", tree{"": repo("*.log\n"), "sub": {Git: true}}, "", []walkProbe{
			{"", "a.log", false, true}, {"sub", "sub/a.log", false, false},
		}},
		{".ignore and .rgignore apply without git", tree{"": {Ignore: []byte("*.a\n"), RgIgnore: []byte("*.b\n")}}, "", []walkProbe{
			{"", "x.a", false, true}, {"", "x.b", false, true}, {"", "x.c", false, false},
		}},
		{"exclude applies in a repository, anchored at it", tree{"": {Git: true, Exclude: []byte("/secret\n")}}, "", []walkProbe{
			{"", "secret", false, true}, {"d", "d/secret", false, false},
		}},
		{"gitignore anchors to its directory", tree{"": {Git: true}, "sub": {GitIgnore: []byte("/gen.ts\n")}}, "", []walkProbe{
			{"sub", "sub/gen.ts", false, true}, {"", "gen.ts", false, false}, {"sub/d", "sub/d/gen.ts", false, false},
		}},
		{"a deeper file overrides a shallower one", tree{"": repo("*.log\n"), "sub": {GitIgnore: []byte("!keep.log\n")}}, "", []walkProbe{
			{"sub", "sub/keep.log", false, false}, {"sub", "sub/a.log", false, true}, {"", "keep.log", false, true},
		}},
		{"a deeper ignore beats a shallower re-include", tree{"": repo("!*.log\n"), "sub": {GitIgnore: []byte("*.log\n")}}, "", []walkProbe{
			{"sub", "sub/a.log", false, true}, {"", "a.log", false, false},
		}},
		{"! re-includes within one file", tree{"": repo("*.log\n!keep.log\n")}, "", []walkProbe{
			{"", "keep.log", false, false}, {"", "a.log", false, true},
		}},
		{".rgignore > .ignore > .gitignore > exclude", tree{"": {Git: true,
			RgIgnore:  []byte("!a\n"),
			Ignore:    []byte("a\nb\n!c\n"),
			GitIgnore: []byte("c\nd\n!e\n"),
			Exclude:   []byte("e\nf\n"),
		}}, "", []walkProbe{
			{"", "a", false, false}, {"", "b", false, true}, {"", "c", false, false},
			{"", "d", false, true}, {"", "e", false, false}, {"", "f", false, true}, {"", "g", false, false},
		}},
		{"a shallower strong kind beats a deeper weak one", tree{"": {Git: true, Ignore: []byte("*.gen\n")}, "sub": {GitIgnore: []byte("!x.gen\n")}}, "", []walkProbe{
			{"sub", "sub/x.gen", false, true},
		}},
		{"an ignore-file whitelist un-hides", tree{"": {Ignore: []byte("!.env\n!.hdir/\n")}}, "", []walkProbe{
			{"", ".env", false, false}, {"", ".hdir", true, false}, {"", ".other", false, true},
		}},
		{"include first: a match is searched even if hidden or ignored", tree{"": repo("gen.ts\ndist/\n")}, "*.ts", []walkProbe{
			{"", "gen.ts", false, false}, {"", ".hidden.ts", false, false}, {"", "a.js", false, true},
			{"", "dist", true, true}, {"", ".hdir", true, true}, {"", "src", true, false},
		}},
		{"include matching a directory descends into it", tree{"": repo("dist/\n")}, "dist", []walkProbe{
			{"", "dist", true, false}, {"dist", "dist/x", false, true},
		}},
		{`include "*" searches everything`, tree{"": repo("*.log\n")}, "*", []walkProbe{
			{"", ".env", false, false}, {"", "a.log", false, false}, {"", ".git", true, false}, {".git", ".git/HEAD", false, false},
		}},
		{"include comment filters nothing", tree{}, "#x", []walkProbe{
			{"", "a", false, false}, {"", ".a", false, true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o *Override
			if tt.include != "" {
				var err error
				if o, err = NewOverride(tt.include); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range tt.probes {
				if got := tt.tree.level(p.dir).Ignored(o, p.path, p.isDir); got != p.ignored {
					t.Errorf("Ignored(%q, dir=%v) below %q = %v, want %v", p.path, p.isDir, p.dir, got, p.ignored)
				}
			}
		})
	}
}
