package loader

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/gordis-run/gordis/internal/schema"
	"github.com/gordis-run/gordis/internal/yamlpatch"
	"github.com/gordis-run/gordis/runtime"
)

// spec is one entry as a file gives it, checked and with its config
// expanded and overridden, not yet applied.
type spec struct {
	id        string
	name      string
	plugin    runtime.Plugin // nil for a group
	disabled  bool           // set on the entry itself or on a group above it
	config    any            // the effective config (JSON values), nil when absent
	raw       []byte         // config as canonical JSON: what an update compares
	isolate   []isolation
	intercept []interception
	inject    []string // the entry's own and every enclosing group's
	place     string   // what the fiber's context depends on: a change re-plugs
	parent    *spec
	children  []*spec // a group's entries

	generated bool  // the id was not in the file
	path      []any // where the entry is in the file: [2] or [2, "config", 0]
	idNode    *yaml.Node
	nameNode  *yaml.Node
	cfgNode   *yaml.Node
}

type isolation struct {
	service string
	label   string // "" for a realm of the entry's own
}

type interception struct {
	service string
	config  json.RawMessage
}

// tree is a parsed file.
type tree struct {
	entries []*spec // top level, in file order
	byID    map[string]*spec
	src     []byte
	checked map[string]bool // the valid configs, for the next load's parser
}

// all visits every spec, parents before their entries, in file order.
func (t *tree) all(visit func(*spec)) {
	var walk func([]*spec)
	walk = func(list []*spec) {
		for _, s := range list {
			visit(s)
			walk(s.children)
		}
	}
	walk(t.entries)
}

// Override adjusts the config of every entry on every load, after
// expansion and before validation, so that what a host sets (from its
// command-line flags, say) keeps winning over the file after a reload.
// config is the entry's config object, empty when the file gives none;
// it is not called for groups nor for configs that are not objects.
type Override func(id, name string, config map[string]any) error

// entryKeys are the keys an entry may have, in the order errors list them.
var entryKeys = []string{"id", "name", "config", "disabled", "inject", "isolate", "intercept"}

// maxValues bounds the values one file may expand to, and maxDepth their
// nesting, so that aliases (which may even refer to themselves) cannot
// make a small file huge or endless.
const (
	maxValues = 1 << 16
	maxDepth  = 64
)

type parser struct {
	file     string
	cat      *Catalog
	override Override
	// checked holds the configs (name and canonical JSON) that the last
	// load found valid: a reload checks only the configs that changed.
	checked map[string]bool

	values  int
	t       *tree
	pending []pending
}

// pending is an error at node n for the entry s (nil: outside any entry),
// worded once generated ids are known.
type pending struct {
	s   *spec
	n   *yaml.Node
	err error
}

func (p *parser) add(s *spec, n *yaml.Node, err error) {
	p.pending = append(p.pending, pending{s, n, err})
}

// parse reads src; it returns the tree or every error found in it.
func (p *parser) parse(src []byte) (*tree, error) {
	file := p.file
	p.t = &tree{byID: map[string]*spec{}, src: src, checked: map[string]bool{}}
	doc, err := document(src)
	if err != nil {
		// The parser's errors have a line, an unknown anchor the place
		// of its alias; any other names the file alone.
		e := &Error{File: file, Err: errors.New(strings.TrimPrefix(err.Error(), "yaml: "))}
		var perr *yaml.ParserError
		var extra *secondDocument
		switch {
		case errors.As(err, &perr):
			e.Line, e.Err = yamlpatch.SyntaxLine(perr, src), errors.New(perr.Message)
		case errors.As(err, &extra):
			e.Line, e.Column = extra.line, extra.column
		default:
			if name, ok := strings.CutPrefix(e.Err.Error(), "unknown anchor '"); ok {
				e.Line, e.Column = aliasAt(src, strings.TrimSuffix(name, "' referenced"))
			}
		}
		return nil, Errors{e}
	}
	if doc.Kind != 0 {
		p.t.entries = p.entries(doc.Content[0], nil)
	}
	p.ids()
	p.t.all(func(s *spec) {
		if s.name != "" && s.name != Group {
			p.config(s)
		}
	})
	p.t.all(func(s *spec) { p.check(s) })
	if len(p.pending) == 0 {
		return p.t, nil
	}
	errs := make(Errors, len(p.pending))
	for i, e := range p.pending {
		errs[i] = p.errorAt(e.s, e.n, e.err)
	}
	slices.SortStableFunc(errs, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return nil, errs
}

// document parses the one YAML document of src; a second one is an error
// rather than text silently left out.
func document(src []byte) (doc yaml.Node, err error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) { // no document: an empty list
			err = nil
		}
		return doc, err
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return doc, &secondDocument{extra.Line, extra.Column}
	case !errors.Is(err, io.EOF):
		return doc, err
	}
	return doc, nil
}

// aliasAt is the position of the first alias *name in src, the YAML
// parser giving none for an alias to an unknown anchor; 0, 0 if not found.
func aliasAt(src []byte, name string) (line, column int) {
	text := string(src)
	for from := 0; ; {
		i := strings.Index(text[from:], "*"+name)
		if i < 0 {
			return 0, 0
		}
		i += from
		end := i + 1 + len(name)
		if end == len(text) || strings.ContainsRune(" \t\r\n,]}", rune(text[end])) {
			start := strings.LastIndexByte(text[:i], '\n') + 1
			return 1 + strings.Count(text[:i], "\n"), 1 + i - start
		}
		from = end
	}
}

// secondDocument is the error for a file of more than one YAML document.
type secondDocument struct{ line, column int }

func (*secondDocument) Error() string {
	return "a second YAML document (after ---): the file is one list of entries"
}

func (p *parser) errorAt(s *spec, n *yaml.Node, err error) *Error {
	e := &Error{File: p.file, Err: err}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	if s != nil {
		e.ID, e.Name = s.id, s.name
	}
	return e
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return n.Content[0]
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// entries reads a list of entries: the file, or a group's config.
func (p *parser) entries(n *yaml.Node, parent *spec) []*spec {
	n = resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		p.add(parent, n, errors.New("expected a list of entries"))
		return nil
	}
	depth := 0
	for s := parent; s != nil; s = s.parent {
		depth++
	}
	if p.values += len(n.Content); depth >= maxDepth || p.values > maxValues {
		p.add(parent, n, errors.New("groups nested too deep, or too many entries (aliases)"))
		return nil
	}
	list := make([]*spec, 0, len(n.Content))
	for _, item := range n.Content {
		if s := p.entry(item, parent); s != nil {
			list = append(list, s)
		}
	}
	return list
}

func (p *parser) entry(n *yaml.Node, parent *spec) *spec {
	s := &spec{parent: parent}
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		p.add(parent, n, errors.New("an entry must be a mapping with a name"))
		return nil
	}
	seen := map[string]bool{}
	var injectNode, isolateNode, interceptNode, disabledNode *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			p.add(s, k, fmt.Errorf("key %q given twice", k.Value))
			continue
		}
		seen[k.Value] = true
		switch k.Value {
		case "id":
			s.idNode = resolve(v)
		case "name":
			s.nameNode = resolve(v)
		case "config":
			s.cfgNode = v
		case "disabled":
			disabledNode = resolve(v)
		case "inject":
			injectNode = resolve(v)
		case "isolate":
			isolateNode = resolve(v)
		case "intercept":
			interceptNode = resolve(v)
		default:
			hint := didYouMean(k.Value, entryKeys)
			if hint == "" {
				hint = " (an entry has " + strings.Join(entryKeys, ", ") + ")"
			}
			p.add(s, k, fmt.Errorf("unknown key %q%s", k.Value, hint))
		}
	}
	if s.idNode != nil {
		if id, ok := str(s.idNode); ok && id != "" {
			s.id = id
		} else {
			p.add(s, s.idNode, errors.New("id must be a non-empty string"))
		}
	}
	if s.nameNode == nil {
		p.add(s, n, errors.New(`missing "name"`))
		return s
	}
	name, ok := str(s.nameNode)
	if !ok || name == "" {
		p.add(s, s.nameNode, errors.New("name must be a non-empty string"))
		return s
	}
	s.name = name
	if disabledNode != nil {
		var ok bool
		if s.disabled, ok = boolean(disabledNode); !ok {
			p.add(s, disabledNode, errors.New("disabled must be true or false"))
		}
	}
	if parent != nil {
		s.disabled = s.disabled || parent.disabled
		s.inject = slices.Clone(parent.inject)
	}
	p.inject(s, injectNode)
	p.isolate(s, isolateNode)
	p.intercept(s, interceptNode)
	if name == Group {
		s.children = p.entries(s.cfgNode, s)
	} else {
		plugin, err := p.cat.Lookup(name)
		if err != nil {
			p.add(s, s.nameNode, err)
		}
		s.plugin = plugin
	}
	var key strings.Builder
	fmt.Fprintf(&key, "%s\x00%q", s.name, s.inject)
	for _, i := range s.isolate {
		fmt.Fprintf(&key, "\x00i%q=%q", i.service, i.label)
	}
	for _, i := range s.intercept {
		fmt.Fprintf(&key, "\x00c%q=%s", i.service, i.config)
	}
	s.place = key.String()
	return s
}

// str reads a scalar as a string, without expansion: ids and names are literal.
func str(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return "", false
	}
	return n.Value, true
}

// boolean reads a YAML boolean; ok is false for anything else.
func boolean(n *yaml.Node) (v, ok bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return false, false
	}
	err := n.Decode(&v)
	return v, err == nil
}

func (p *parser) inject(s *spec, n *yaml.Node) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		p.add(s, n, errors.New("inject must be a list of service names"))
		return
	}
	for _, item := range n.Content {
		item = resolve(item)
		name, ok := str(item)
		if !ok || name == "" {
			p.add(s, item, errors.New("inject must be a list of service names"))
			continue
		}
		if !slices.Contains(s.inject, name) {
			s.inject = append(s.inject, name)
		}
	}
}

func (p *parser) isolate(s *spec, n *yaml.Node) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.add(s, n, errors.New("isolate must map service names to true or a label"))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		if on, ok := boolean(v); ok {
			if on {
				s.isolate = append(s.isolate, isolation{service: k.Value})
			}
			continue
		}
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" || v.Value == "" {
			p.add(s, v, fmt.Errorf("isolate of %q must be true, false or a label", k.Value))
			continue
		}
		s.isolate = append(s.isolate, isolation{service: k.Value, label: v.Value})
	}
	slices.SortFunc(s.isolate, func(a, b isolation) int { return strings.Compare(a.service, b.service) })
}

func (p *parser) intercept(s *spec, n *yaml.Node) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.add(s, n, errors.New("intercept must map service names to config mappings"))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if resolve(v).Kind != yaml.MappingNode {
			p.add(s, resolve(v), fmt.Errorf("intercept of %q must be a mapping", k.Value))
			continue
		}
		val, bad, err := p.value(v)
		if err != nil {
			p.add(s, bad, err)
			continue
		}
		raw, err := json.Marshal(val)
		if err != nil {
			p.add(s, v, err)
			continue
		}
		s.intercept = append(s.intercept, interception{service: k.Value, config: raw})
	}
	slices.SortFunc(s.intercept, func(a, b interception) int { return strings.Compare(a.service, b.service) })
}

// config expands the entry's config and applies the override, which sees
// the entry's id, generated or not.
func (p *parser) config(s *spec) {
	if s.cfgNode != nil {
		val, bad, err := p.value(s.cfgNode)
		if err != nil {
			p.add(s, bad, err)
			s.plugin = nil // nothing to check
			return
		}
		s.config = val
	}
	if p.override != nil {
		obj, isObj := s.config.(map[string]any)
		if s.config == nil {
			obj, isObj = map[string]any{}, true
		}
		if isObj {
			if err := p.override(s.id, s.name, obj); err != nil {
				p.add(s, s.configNode(), err)
				s.plugin = nil
				return
			}
			if s.config != nil || len(obj) > 0 {
				s.config = obj
			}
		}
	}
	if s.config == nil {
		return // absent, or null: the plugin's defaults
	}
	raw, err := json.Marshal(s.config)
	if err != nil {
		p.add(s, s.configNode(), err)
		s.plugin = nil
		return
	}
	s.raw = raw
}

// configNode is where an error about the entry's config is reported:
// the config, or the name when the file gives no config.
func (s *spec) configNode() *yaml.Node {
	if s.cfgNode != nil {
		return resolve(s.cfgNode)
	}
	return s.nameNode
}

// ids checks that ids are unique and generates the missing ones, short and
// derived from the entry's place so that a file that cannot be written
// back still gives the same ids on every load.
func (p *parser) ids() {
	first := map[string]*spec{}
	p.t.all(func(s *spec) {
		if s.id == "" {
			return
		}
		if f, dup := first[s.id]; dup {
			p.add(s, s.idNode, fmt.Errorf("%w %q (first at %d:%d)", ErrDuplicateID, s.id, f.idNode.Line, f.idNode.Column))
			return
		}
		first[s.id] = s
	})
	// Paths count the list's items, which are every item of the file's
	// list when nothing failed (and nothing is written back otherwise).
	var walk func(list []*spec, parent string, at []any)
	walk = func(list []*spec, parent string, at []any) {
		for i, s := range list {
			s.path = append(slices.Clip(at), i)
			if s.id == "" && s.name != "" {
				for n := 0; ; n++ {
					h := fnv.New32a()
					fmt.Fprintf(h, "%s/%d/%s/%d", parent, i, s.name, n)
					id := fmt.Sprintf("%s-%04x", s.name, h.Sum32()&0xffff)
					if first[id] == nil {
						s.id, s.generated = id, true
						first[id] = s
						break
					}
				}
			}
			walk(s.children, s.id, append(slices.Clip(s.path), "config"))
		}
	}
	walk(p.t.entries, "", nil)
	p.t.byID = first
}

// check validates a plugin entry's config as the runtime will.
func (p *parser) check(s *spec) {
	if s.plugin == nil {
		return
	}
	key := s.name + "\x00" + string(s.raw)
	if p.checked[key] {
		p.t.checked[key] = true
		return
	}
	err := runtime.CheckConfig(s.plugin, s.arg())
	if err == nil {
		p.t.checked[key] = true
		return
	}
	var verr *schema.ValidationError
	if !errors.As(err, &verr) {
		p.add(s, s.configNode(), err)
		return
	}
	for _, v := range verr.Violations {
		n := s.configNode()
		if s.cfgNode != nil {
			n = locate(n, v)
		}
		if path, ok := strings.CutPrefix(v, "unknown property "); ok {
			if path, err := strconv.Unquote(path); err == nil {
				doc, _ := runtime.ConfigSchema(s.plugin)
				v += keyHint(doc, path)
			}
		}
		p.add(s, n, errors.New(v))
	}
}

// locate finds the node a violation is about. A violation names its place
// as the validator words it, a quoted path such as "roots[0].path" (or
// "value" for the config itself); keys are matched longest first, so that
// a key holding a dot is still found. A missing property is reported at
// the mapping that lacks it, an unknown one at its key.
func locate(n *yaml.Node, violation string) *yaml.Node {
	q := strings.IndexByte(violation, '"')
	if q < 0 {
		return n
	}
	quoted, err := strconv.QuotedPrefix(violation[q:])
	if err != nil {
		return n
	}
	path, _ := strconv.Unquote(quoted)
	unknown := strings.HasPrefix(violation, "unknown property ")
	cur := n
	for path != "" {
		cur = resolve(cur)
		switch {
		case path[0] == '[' && cur.Kind == yaml.SequenceNode:
			end := strings.IndexByte(path, ']')
			i, err := strconv.Atoi(path[1:max(end, 1)])
			if end < 0 || err != nil || i < 0 || i >= len(cur.Content) {
				return cur
			}
			cur, path = cur.Content[i], strings.TrimPrefix(path[end+1:], ".")
		case cur.Kind == yaml.MappingNode:
			best := -1
			for i := 0; i+1 < len(cur.Content); i += 2 {
				k := cur.Content[i].Value
				if (path == k || strings.HasPrefix(path, k+".") || strings.HasPrefix(path, k+"[")) &&
					(best < 0 || len(k) > len(cur.Content[best].Value)) {
					best = i
				}
			}
			if best < 0 {
				return cur
			}
			rest := strings.TrimPrefix(path[len(cur.Content[best].Value):], ".")
			if rest == "" && unknown {
				return cur.Content[best]
			}
			cur, path = cur.Content[best+1], rest
		default:
			return cur
		}
	}
	return resolve(cur)
}

// value converts a YAML node to JSON values, expanding ${VAR} in strings.
// On error it also returns the node at fault.
func (p *parser) value(n *yaml.Node) (any, *yaml.Node, error) {
	return p.valueAt(n, 0)
}

func (p *parser) valueAt(n *yaml.Node, depth int) (any, *yaml.Node, error) {
	if p.values++; p.values > maxValues || depth > maxDepth {
		return nil, n, errors.New("nested too deep, or too many values (aliases)")
	}
	switch n.Kind {
	case yaml.AliasNode:
		return p.valueAt(n.Alias, depth+1)
	case yaml.DocumentNode:
		return p.valueAt(resolve(n), depth+1)
	case yaml.MappingNode:
		obj := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.ShortTag() == "!!merge" {
				return nil, k, errors.New("merge keys (<<) are not supported")
			}
			if k.Kind != yaml.ScalarNode {
				return nil, k, errors.New("a key must be a scalar")
			}
			if _, dup := obj[k.Value]; dup {
				return nil, k, fmt.Errorf("key %q given twice", k.Value)
			}
			v, bad, err := p.valueAt(n.Content[i+1], depth+1)
			if err != nil {
				return nil, bad, err
			}
			obj[k.Value] = v
		}
		return obj, nil, nil
	case yaml.SequenceNode:
		arr := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, bad, err := p.valueAt(item, depth+1)
			if err != nil {
				return nil, bad, err
			}
			arr = append(arr, v)
		}
		return arr, nil, nil
	}
	switch n.ShortTag() {
	case "!!str":
		s, err := expand(n.Value)
		if err != nil {
			return nil, n, err
		}
		return s, nil, nil
	case "!!timestamp", "!!binary":
		return n.Value, nil, nil
	case "!!null":
		return nil, nil, nil
	case "!!bool", "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, n, err
		}
		if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
			return nil, n, fmt.Errorf("%s is not a JSON number", n.Value)
		}
		return v, nil, nil
	}
	return nil, n, fmt.Errorf("unsupported tag %s", n.Tag)
}

// expand replaces ${VAR} and ${VAR:-default} with the environment's
// values; $${ is a literal ${. An unset variable without a default is an
// error rather than an empty string, which would fail later and further
// from its cause.
func expand(s string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i-1] + "${")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", s)
		}
		ref := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validVar(name) {
			return "", fmt.Errorf("bad variable reference ${%s}", ref)
		}
		val, set := os.LookupEnv(name)
		switch {
		case set && (val != "" || !hasDef):
			b.WriteString(val)
		case hasDef:
			b.WriteString(def)
		default:
			return "", fmt.Errorf("environment variable %s is not set (${%s:-default} gives a default)", name, name)
		}
		s = s[i+end+1:]
	}
}

func validVar(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		if c != '_' && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
