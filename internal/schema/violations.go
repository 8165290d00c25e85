package schema

import (
	"cmp"
	"encoding/json"
	"errors"
	"math/big"
	"slices"
	"strconv"
	"strings"

	validator "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// violation is one failed keyword, in plain words, with where it occurred.
type violation struct {
	key  []keyPart
	rank int // at the same place: required, then type, then the rest
	text string
}

const (
	rankRequired = iota
	rankType
	rankOther
)

// keyPart orders one path segment: declared properties by declaration, then
// undeclared ones by name; array items by index.
type keyPart struct {
	undeclared bool
	n          int
	name       string
}

func (s *Schema) validate(v any) error {
	err := s.compiled.Validate(v)
	if err == nil {
		return nil
	}
	var root *validator.ValidationError
	if !errors.As(err, &root) {
		return err
	}
	c := collector{schema: s, instance: v}
	c.collect(root)
	slices.SortStableFunc(c.out, func(a, b violation) int {
		return cmp.Or(compareKeys(a.key, b.key), cmp.Compare(a.rank, b.rank), strings.Compare(a.text, b.text))
	})
	texts := make([]string, 0, len(c.out))
	for _, v := range c.out {
		if len(texts) == 0 || texts[len(texts)-1] != v.text {
			texts = append(texts, v.text)
		}
	}
	return &ValidationError{Violations: texts}
}

func compareKeys(a, b []keyPart) int {
	for i := range min(len(a), len(b)) {
		x, y := a[i], b[i]
		if c := cmp.Or(boolCompare(x.undeclared, y.undeclared), cmp.Compare(x.n, y.n), strings.Compare(x.name, y.name)); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	default:
		return -1
	}
}

type collector struct {
	schema   *Schema
	instance any
	out      []violation
}

var printer = message.NewPrinter(language.English)

func (c *collector) collect(e *validator.ValidationError) {
	at := e.InstanceLocation
	switch k := e.ErrorKind.(type) {
	case *kind.Group, *kind.Schema, *kind.Reference, *kind.AllOf:
		for _, cause := range e.Causes {
			c.collect(cause)
		}
	case *kind.Required:
		for _, name := range k.Missing {
			p := appendPath(at, name)
			c.add(p, rankRequired, "missing required property "+c.name(p))
		}
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			p := appendPath(at, name)
			c.add(p, rankOther, "unknown property "+c.name(p))
		}
	case *kind.Type:
		switch {
		case c.positiveInteger(at):
			c.add(at, rankType, c.name(at)+" must be a positive integer")
		case len(at) == 0:
			c.add(at, rankType, "expected "+typeWords(k.Want)+", got "+typeWords([]string{k.Got}))
		default:
			c.add(at, rankType, c.name(at)+" must be "+typeWords(k.Want))
		}
	case *kind.Minimum:
		if c.positiveInteger(at) {
			c.add(at, rankType, c.name(at)+" must be a positive integer")
		} else {
			c.add(at, rankOther, c.name(at)+" must be >= "+ratString(k.Want))
		}
	default:
		c.add(at, rankOther, c.name(at)+" "+describe(e.ErrorKind))
	}
}

// describe words a keyword failure as the predicate of a sentence.
func describe(k validator.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Maximum:
		return "must be <= " + ratString(k.Want)
	case *kind.ExclusiveMinimum:
		return "must be > " + ratString(k.Want)
	case *kind.ExclusiveMaximum:
		return "must be < " + ratString(k.Want)
	case *kind.MultipleOf:
		return "must be a multiple of " + ratString(k.Want)
	case *kind.Enum:
		if len(k.Want) == 1 {
			return "must be " + jsonText(k.Want[0])
		}
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = jsonText(w)
		}
		return "must be one of " + strings.Join(want, ", ")
	case *kind.Const:
		return "must be " + jsonText(k.Want)
	case *kind.MinLength:
		if k.Want == 1 {
			return "must not be empty"
		}
		return "must be at least " + count(k.Want, "character", "characters") + " long"
	case *kind.MaxLength:
		return "must be at most " + count(k.Want, "character", "characters") + " long"
	case *kind.Pattern:
		return "must match the pattern " + strconv.Quote(k.Want)
	case *kind.Format:
		return "must be a valid " + k.Want
	case *kind.MinItems:
		return "must have at least " + count(k.Want, "item", "items")
	case *kind.MaxItems:
		return "must have at most " + count(k.Want, "item", "items")
	case *kind.UniqueItems:
		return "must not contain duplicate items"
	case *kind.MinProperties:
		return "must have at least " + count(k.Want, "property", "properties")
	case *kind.MaxProperties:
		return "must have at most " + count(k.Want, "property", "properties")
	case *kind.AnyOf:
		return "does not match any allowed form"
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			return "matches more than one allowed form"
		}
		return "does not match any allowed form"
	case *kind.FalseSchema:
		return "is not allowed"
	default:
		return "is invalid: " + k.LocalizedString(printer)
	}
}

func (c *collector) add(path []string, rank int, text string) {
	c.out = append(c.out, violation{key: c.key(path), rank: rank, text: text})
}

func appendPath(path []string, name string) []string {
	return append(slices.Clip(path), name)
}

// key walks the instance and the declared order along path. A segment under
// an array is an index; anything else (including a missing property) is a
// property name.
func (c *collector) key(path []string) []keyPart {
	key := make([]keyPart, len(path))
	cur, order := c.instance, c.schema.order
	for i, seg := range path {
		if arr, ok := cur.([]any); ok {
			n, _ := strconv.Atoi(seg)
			key[i] = keyPart{n: n}
			cur = nil
			if n >= 0 && n < len(arr) {
				cur = arr[n]
			}
			if order != nil {
				order = order.items
			}
			continue
		}
		obj, _ := cur.(map[string]any)
		cur = obj[seg]
		if order == nil {
			key[i] = keyPart{undeclared: true, name: seg}
			continue
		}
		if n, ok := order.index[seg]; ok {
			key[i] = keyPart{n: n}
		} else {
			key[i] = keyPart{undeclared: true, name: seg}
		}
		order = order.props[seg]
	}
	return key
}

// name renders path for a message: "a.b[0].c", or "value" for the root.
func (c *collector) name(path []string) string {
	if len(path) == 0 {
		return "value"
	}
	var b strings.Builder
	cur := c.instance
	for i, seg := range path {
		if arr, ok := cur.([]any); ok {
			b.WriteString("[" + seg + "]")
			cur = nil
			if n, err := strconv.Atoi(seg); err == nil && n >= 0 && n < len(arr) {
				cur = arr[n]
			}
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
		obj, _ := cur.(map[string]any)
		cur = obj[seg]
	}
	return strconv.Quote(b.String())
}

// positiveInteger reports whether the schema at path is an integer with
// minimum 1, whose type and minimum failures share one message.
func (c *collector) positiveInteger(path []string) bool {
	s := c.schema.compiled
	for _, seg := range path {
		switch {
		case s.Properties[seg] != nil:
			s = s.Properties[seg]
		case s.Items2020 != nil:
			s = s.Items2020
		default:
			return false
		}
	}
	return s.Types != nil && slices.Equal(s.Types.ToStrings(), []string{"integer"}) &&
		s.Minimum != nil && s.Minimum.Cmp(big.NewRat(1, 1)) == 0
}

var articles = map[string]string{
	"null":    "null",
	"boolean": "a boolean",
	"number":  "a number",
	"integer": "an integer",
	"string":  "a string",
	"array":   "an array",
	"object":  "an object",
}

func typeWords(types []string) string {
	words := make([]string, len(types))
	for i, t := range types {
		words[i] = cmp.Or(articles[t], t)
	}
	return strings.Join(words, " or ")
}

func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(unescapeHTML(b))
}

// count renders "1 item" or "3 items".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
