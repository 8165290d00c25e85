package yamlpatch

import (
	"strings"

	yaml "go.yaml.in/yaml/v4"
)

// parserStage holds the messages of the YAML parser's second stage, which
// counts lines from 0; its scanner counts from 1.
var parserStage = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found undefined tag handle":             true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
}

// SyntaxLine is the 1-based line in src of the YAML syntax error perr: the
// line of the construct the parser was in (an unclosed bracket) or of the
// problem. The parser says 0 for the first line whatever the stage, and a
// problem at the end of the text is on the last line. A tab in an
// indentation is reported at the value before it; the line with the tab,
// which no one sees, is the one to name.
func SyntaxLine(perr *yaml.ParserError, src []byte) int {
	line := perr.Line
	if line == 0 || parserStage[perr.Message] {
		line++
	}
	// CRLF and a lone CR each end a line for the parser, as LF does.
	text := strings.ReplaceAll(strings.ReplaceAll(string(src), "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if strings.HasPrefix(perr.Message, "found a tab character") {
		for i := line - 1; i < len(lines); i++ {
			if indent := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " \t"))]; strings.Contains(indent, "\t") {
				return i + 1
			}
		}
	}
	return min(line, len(lines))
}
