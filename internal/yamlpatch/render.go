package yamlpatch

import (
	"fmt"
	"strings"
	"unicode"

	yaml "go.yaml.in/yaml/v4"
)

// quoteStyles are the scalar styles a new string inherits from the old one.
const quoteStyles = yaml.SingleQuotedStyle | yaml.DoubleQuotedStyle

// isBlock reports whether n is written as an indented block: a collection
// with entries that is not asked to be flow.
func isBlock(n *yaml.Node) bool {
	return isCollection(n) && len(n.Content) > 0 && n.Style&yaml.FlowStyle == 0
}

func isCollection(n *yaml.Node) bool {
	return n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode
}

// scalar renders a scalar node on one line. prefer is the quoting of the
// value it replaces, kept for a string when the string allows it; flow says
// the text goes inside a flow collection.
func scalar(n *yaml.Node, flow bool, prefer yaml.Style) (string, error) {
	str := n.ShortTag() == "!!str"
	if str && prefer&yaml.SingleQuotedStyle != 0 && printable(n.Value) && !strings.Contains(n.Value, "\n") {
		return "'" + strings.ReplaceAll(n.Value, "'", "''") + "'", nil
	}
	c := *n
	c.Style &= quoteStyles
	if str && prefer&yaml.DoubleQuotedStyle != 0 {
		c.Style = yaml.DoubleQuotedStyle
	}
	s, err := marshal(&c)
	if err != nil {
		return "", err
	}
	if strings.Contains(s, "\n") || flow && !strings.HasPrefix(s, `"`) && !strings.HasPrefix(s, "'") && strings.ContainsAny(s, ",[]{}") {
		c.Style = yaml.DoubleQuotedStyle
		if s, err = marshal(&c); err != nil {
			return "", err
		}
	}
	if strings.Contains(s, "\n") {
		return "", fmt.Errorf("%w: a scalar that does not fit on one line", ErrUnsupported)
	}
	return s, nil
}

func marshal(n *yaml.Node) (string, error) {
	b, err := yaml.Marshal(n)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// printable reports whether s can stand between quotes or in a literal
// block as written: no control characters but tab and newline, and none of
// the characters the parser also takes for line breaks.
func printable(s string) bool {
	for _, r := range s {
		if r != '\t' && r != '\n' && !unicode.IsPrint(r) || r == '\u0085' || r == '\u2028' || r == '\u2029' || r == '\uFEFF' {
			return false
		}
	}
	return true
}

// literal returns the header and lines of s as a literal block scalar, or
// false when s reads better, or only correctly, on one line.
func literal(s string) (header string, lines []string, ok bool) {
	if !strings.Contains(s, "\n") || strings.TrimSpace(s) == "" || !printable(s) {
		return "", nil, false
	}
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			if l[0] == ' ' || l[0] == '\t' { // its indentation would be taken for the block's
				return "", nil, false
			}
			break
		}
	}
	body := strings.TrimSuffix(s, "\n")
	if strings.HasSuffix(body, "\n") {
		// Kept trailing breaks (|+) would also take the blank lines
		// that follow the value in the file.
		return "", nil, false
	}
	header = "|"
	if body == s {
		header = "|-"
	}
	return header, strings.Split(body, "\n"), true
}

// inline renders n where it stays on the line it starts on: a scalar, an
// empty or flow collection, or a literal block whose lines are indented at
// indent. prefer is the style of the value n replaces.
func inline(n *yaml.Node, flow bool, prefer yaml.Style, indent int) (string, error) {
	if isCollection(n) {
		return flowText(n)
	}
	if !flow && prefer&quoteStyles == 0 && n.ShortTag() == "!!str" {
		if h, lines, ok := literal(n.Value); ok {
			var b strings.Builder
			b.WriteString(h)
			for _, l := range lines {
				b.WriteByte('\n')
				if l != "" {
					b.WriteString(strings.Repeat(" ", indent) + l)
				}
			}
			return b.String(), nil
		}
	}
	return scalar(n, flow, prefer)
}

// flowText renders n as flow YAML on one line.
func flowText(n *yaml.Node) (string, error) {
	open, closer, step := "[", "]", 1
	if n.Kind == yaml.MappingNode {
		open, closer, step = "{", "}", 2
	}
	if !isCollection(n) {
		return scalar(n, true, 0)
	}
	var b strings.Builder
	b.WriteString(open)
	for i := 0; i < len(n.Content); i += step {
		if i > 0 {
			b.WriteString(", ")
		}
		if step == 2 {
			k, err := key(n.Content[i], true)
			if err != nil {
				return "", err
			}
			b.WriteString(k + ": ")
		}
		v, err := flowText(n.Content[i+step-1])
		if err != nil {
			return "", err
		}
		b.WriteString(v)
	}
	b.WriteString(closer)
	return b.String(), nil
}

func key(n *yaml.Node, flow bool) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("%w: a mapping key that is not a scalar", ErrUnsupported)
	}
	return scalar(n, flow, 0)
}

// block renders a block collection whose first line continues the current
// one and whose other lines start at indent.
type block struct {
	b       strings.Builder
	unit    int
	compact bool
}

func (w *block) newline(indent int) {
	w.b.WriteString("\n" + strings.Repeat(" ", indent))
}

func (w *block) node(n *yaml.Node, indent int) error {
	if n.Kind == yaml.SequenceNode {
		for i, item := range n.Content {
			if i > 0 {
				w.newline(indent)
			}
			w.b.WriteString("- ")
			if isBlock(item) {
				if err := w.node(item, indent+2); err != nil {
					return err
				}
				continue
			}
			s, err := inline(item, false, 0, indent+2)
			if err != nil {
				return err
			}
			w.b.WriteString(s)
		}
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if i > 0 {
			w.newline(indent)
		}
		k, err := key(n.Content[i], false)
		if err != nil {
			return err
		}
		w.b.WriteString(k + ":")
		seq := indent + w.unit
		if w.compact {
			seq = indent
		}
		if err := w.value(n.Content[i+1], indent+w.unit, seq); err != nil {
			return err
		}
	}
	return nil
}

// value writes v after a "key:" or "-": a block mapping on the next lines
// at indent, a block sequence at seq, anything else after a space.
func (w *block) value(v *yaml.Node, indent, seq int) error {
	switch {
	case isBlock(v) && v.Kind == yaml.MappingNode:
		w.newline(indent)
		return w.node(v, indent)
	case isBlock(v):
		w.newline(seq)
		return w.node(v, seq)
	}
	s, err := inline(v, false, 0, indent)
	if err != nil {
		return err
	}
	w.b.WriteString(" " + s)
	return nil
}

// render returns n as the text of a value that starts at column indent:
// a block collection's first line continues the current line.
func (d *doc) render(n *yaml.Node, indent int, flow bool, prefer yaml.Style) (string, error) {
	if flow || !isBlock(n) {
		return inline(n, flow, prefer, indent)
	}
	w := block{unit: d.unit, compact: d.compact}
	if err := w.node(n, indent); err != nil {
		return "", err
	}
	return w.b.String(), nil
}
