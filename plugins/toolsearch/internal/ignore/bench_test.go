package ignore

import "testing"

// benchPaths are walked entries of a typical repository.
var benchPaths = []struct {
	path  string
	isDir bool
}{
	{"src", true}, {"src/components", true}, {"src/components/Button.tsx", false},
	{"src/components/Button.test.tsx", false}, {"src/index.ts", false}, {"src/util/strings.go", false},
	{"src/util/strings_test.go", false}, {"README.md", false}, {"package.json", false},
	{".git", true}, {".github/workflows/ci.yml", false}, {"node_modules", true},
	{"node_modules/react/index.js", false}, {"dist/bundle.min.js", false}, {"docs/guide/intro.md", false},
	{"internal/ignore/matcher.go", false}, {"coverage/lcov.info", false}, {".env", false},
	{"scripts/build.sh", false}, {"vendor/github.com/x/y/z.go", false},
}

func BenchmarkOverrideMatch(b *testing.B) {
	for _, pattern := range []string{"*.go", "*_test.go", "src/**/*.ts", "*.{ts,tsx}", "src/*/[A-Z]*.tsx"} {
		b.Run(pattern, func(b *testing.B) {
			o, err := NewOverride(append([]string{pattern}, VCSExcludes()...)...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				p := benchPaths[i%len(benchPaths)]
				o.Match(p.path, p.isDir)
			}
		})
	}
}

const benchGitignore = `# dependencies
node_modules/
/.pnp
.pnp.js
# testing
/coverage
# production
/build
dist/
*.min.js
# misc
.DS_Store
.env.local
.env.*.local
npm-debug.log*
yarn-debug.log*
*.log
!important.log
*.tmp
*.swp
.idea/
.vscode/*
!.vscode/settings.json
__pycache__/
*.py[cod]
/vendor/**
target/
`

func BenchmarkIgnored(b *testing.B) {
	root := Root().Child("", Files{GitIgnore: []byte(benchGitignore), Git: true})
	src := root.Child("src", Files{GitIgnore: []byte("*.generated.ts\n!keep.generated.ts\n")})
	deep := src.Child("src/components", Files{})
	include, err := NewOverride("*.ts")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		o    *Override
	}{{"no include", nil}, {"include *.ts", include}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				p := benchPaths[i%len(benchPaths)]
				deep.Ignored(bc.o, p.path, p.isDir)
			}
		})
	}
}
