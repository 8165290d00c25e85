package toolsearch_test

import (
	"strings"
	"testing"

	"github.com/gordis-run/gordis/registry"
)

// Section B: argument validation, plain errors before any resolve or I/O.
func TestValidation(t *testing.T) {
	const (
		errPattern  = "Error: pattern must be a non-empty string"
		errPath     = "Error: path must be a non-empty string when given"
		errBlank    = "Error: include must be a non-empty glob when given"
		errNegated  = `Error: include must be a positive glob filter; negated patterns ("!…") are not supported`
		errMultiple = "Error: include must be one glob, not a comma-separated list (use {a,b} alternation instead)"
	)
	both(t, func(t *testing.T, p provider) {
		e := setup(t, options{provider: p})
		e.write(t, map[string]string{"a.txt": "needle\n", "b.ts": "x  y\n"})
		check(t, e, p, []row{
			{name: "S-012 empty glob pattern", tool: "glob", args: args{"pattern": ""}, want: errPattern},
			{name: "S-012 spaces", tool: "glob", args: args{"pattern": "   "}, want: errPattern},
			{name: "S-012 tab and newline", tool: "glob", args: args{"pattern": "\t\n"}, want: errPattern},
			{name: "S-012 BOM", tool: "glob", args: args{"pattern": "\uFEFF"}, want: errPattern},
			{name: "S-012 U+0085 is not blank and filters nothing", tool: "glob", args: args{"pattern": "\u0085"}, want: lines("a.txt", "b.ts")},
			{name: "S-013 blank glob path", tool: "glob", args: args{"pattern": "*", "path": " "}, want: errPath},
			{name: "S-013 empty glob path", tool: "glob", args: args{"pattern": "*", "path": ""}, want: errPath},
			{name: "S-013 blank grep path", tool: "grep", args: args{"pattern": "x", "path": "\t"}, want: errPath},
			{name: "S-014 empty grep pattern", tool: "grep", args: args{"pattern": ""}, want: errPattern},
			{name: "S-014 whitespace is a regex", tool: "grep", args: args{"pattern": "  "}, want: "Found 1 match\n\nb.ts\nLine 1: x  y"},
			{name: "S-015 blank include", tool: "grep", args: args{"pattern": "x", "include": " "}, want: errBlank},
			{name: "S-015 empty include", tool: "grep", args: args{"pattern": "x", "include": ""}, want: errBlank},
			{name: "S-016 negated include", tool: "grep", args: args{"pattern": "x", "include": "!*.ts"}, want: errNegated},
			{name: "S-016 only the first character counts", tool: "grep", args: args{"pattern": "x", "include": " !*.ts", "path": "."}, want: "No matches found"},
			{name: "S-017 a list", tool: "grep", args: args{"pattern": "x", "include": "*.ts,*.js"}, want: errMultiple},
			{name: "S-017 depth never below zero", tool: "grep", args: args{"pattern": "x", "include": "a},b"}, want: errMultiple},
			{name: "S-017 alternation is one glob", tool: "grep", args: args{"pattern": "x", "include": "*.{ts,tsx}"}, want: "Found 1 match\n\nb.ts\nLine 1: x  y"},
			{name: "S-018 glob pattern before path", tool: "glob", args: args{"pattern": " ", "path": "/"}, want: errPattern},
			{name: "S-018 glob path before resolve", tool: "glob", args: args{"pattern": "*", "path": " "}, want: errPath},
			{name: "S-018 grep pattern first", tool: "grep", args: args{"pattern": "", "path": " ", "include": "!x"}, want: errPattern},
			{name: "S-018 grep path before include", tool: "grep", args: args{"pattern": "x", "path": " ", "include": "!x"}, want: errPath},
			{name: "S-018 include blank before negation", tool: "grep", args: args{"pattern": "x", "include": "  "}, want: errBlank},
			{name: "S-018 negation before comma", tool: "grep", args: args{"pattern": "x", "include": "!a,b"}, want: errNegated},
			{name: "S-018 include before resolve", tool: "grep", args: args{"pattern": "x", "path": "/", "include": "a,b"}, want: errMultiple},
			{name: "S-010 undeclared keys are ignored", tool: "glob", args: args{"pattern": "*.txt", "head_limit": 1, "offset": 3}, want: "a.txt"},
			{name: "S-010 undeclared grep keys", tool: "grep", args: args{"pattern": "needle", "case_insensitive": true, "output_mode": "count"}, want: "Found 1 match\n\na.txt\nLine 1: needle"},
		})
	})
}

// S-011: schema violations are the registry's, with its name and code.
func TestSchemaViolations(t *testing.T) {
	e := setup(t, options{})
	for _, c := range []struct {
		tool string
		args string
	}{
		{"glob", `{}`},
		{"glob", `{"pattern":1}`},
		{"glob", `{"pattern":"*","path":2}`},
		{"glob", `{"pattern":null}`},
		{"glob", `{"pattern":"*","path":null}`},
		{"grep", `{"path":"."}`},
		{"grep", `{"pattern":"x","include":["a"]}`},
		{"grep", `{"pattern":"x","include":null}`},
		{"grep", `{"pattern":"x","path":null}`},
	} {
		r := e.call(c.tool, c.args)
		if !r.IsError || !strings.HasPrefix(r.Text, "Error: invalid arguments: ") ||
			r.Error.Code != registry.CodeInvalidArgs || r.Error.Name != registry.NameArgs {
			t.Errorf("%s %s: %+v", c.tool, c.args, r)
		}
	}
}
