package rustregex

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Long names (and the few other aliases Rust accepts) of the general
// categories, keyed by their canonical form.
var categoryAliases = map[string]string{
	"other": "C", "control": "Cc", "cntrl": "Cc", "format": "Cf", "unassigned": "Cn",
	"privateuse": "Co", "surrogate": "Cs",
	"letter": "L", "casedletter": "LC", "lowercaseletter": "Ll", "modifierletter": "Lm",
	"otherletter": "Lo", "titlecaseletter": "Lt", "uppercaseletter": "Lu",
	"mark": "M", "combiningmark": "M", "spacingmark": "Mc", "enclosingmark": "Me", "nonspacingmark": "Mn",
	"number": "N", "decimalnumber": "Nd", "digit": "Nd", "letternumber": "Nl", "othernumber": "No",
	"punctuation": "P", "punct": "P", "connectorpunctuation": "Pc", "dashpunctuation": "Pd",
	"closepunctuation": "Pe", "finalpunctuation": "Pf", "initialpunctuation": "Pi",
	"otherpunctuation": "Po", "openpunctuation": "Ps",
	"symbol": "S", "currencysymbol": "Sc", "modifiersymbol": "Sk", "mathsymbol": "Sm", "othersymbol": "So",
	"separator": "Z", "lineseparator": "Zl", "paragraphseparator": "Zp", "spaceseparator": "Zs",
}

// Four-letter ISO 15924 codes of the scripts a pattern most often names.
var scriptCodes = map[string]string{
	"arab": "Arabic", "armn": "Armenian", "beng": "Bengali", "cyrl": "Cyrillic", "deva": "Devanagari",
	"ethi": "Ethiopic", "geor": "Georgian", "grek": "Greek", "gujr": "Gujarati", "guru": "Gurmukhi",
	"hang": "Hangul", "hani": "Han", "hebr": "Hebrew", "hira": "Hiragana", "kana": "Katakana",
	"khmr": "Khmer", "knda": "Kannada", "latn": "Latin", "mlym": "Malayalam", "mong": "Mongolian",
	"mymr": "Myanmar", "taml": "Tamil", "telu": "Telugu", "thai": "Thai", "tibt": "Tibetan",
	"zinh": "Inherited", "zyyy": "Common",
}

// Aliases of binary properties Rust knows; the canonical full names come from Go's tables.
var propertyAliases = map[string]string{
	"wspace": "whitespace", "space": "whitespace", "alpha": "alphabetic", "upper": "uppercase",
	"lower": "lowercase", "ahex": "asciihexdigit", "hex": "hexdigit", "ideo": "ideographic",
	"qmark": "quotationmark", "sterm": "sentenceterminal", "term": "terminalpunctuation",
	"dia": "diacritic", "ext": "extender", "joinc": "joincontrol", "bidic": "bidicontrol",
}

// Property names rg accepts that Go's tables cannot reproduce: refused by name
// rather than reported as unknown.
var unsupportedProperties = map[string]bool{
	"scx": true, "scriptextensions": true, "age": true, "wb": true, "wordbreak": true,
	"gcb": true, "graphemeclusterbreak": true, "sb": true, "sentencebreak": true,
	"emoji": true, "emojipresentation": true, "emojimodifier": true, "emojimodifierbase": true,
	"emojicomponent": true, "extendedpictographic": true, "idstart": true, "idcontinue": true,
	"xidstart": true, "xidcontinue": true, "cased": true, "caseignorable": true,
	"changeswhenlowercased": true, "changeswhenuppercased": true, "changeswhentitlecased": true,
	"changeswhencasefolded": true, "changeswhencasemapped": true, "defaultignorablecodepoint": true,
	"graphemebase": true, "graphemeextend": true,
}

// canonical applies Unicode's loose matching (UAX44-LM3) the way Rust does:
// a leading "is" is dropped, then spaces, underscores and hyphens, and
// ASCII case is ignored; "isc" stays (it names Other, not ISO_Comment).
func canonical(name string) string {
	stripped := len(name) >= 2 && strings.EqualFold(name[:2], "is")
	if stripped {
		name = name[2:]
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == ' ' || c == '_' || c == '-' || c >= utf8.RuneSelf:
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte(c)
		}
	}
	if stripped && b.String() == "c" {
		return "isc"
	}
	return b.String()
}

func lookupCategory(c string) (runeSet, bool) {
	t := loadTables()
	switch c {
	case "any":
		return runeSet{0, unicode.MaxRune}, true
	case "assigned":
		return t.assigned, true
	case "ascii":
		return runeSet{0, 0x7F}, true
	}
	short := categoryAliases[c]
	if short == "" {
		for k := range unicode.Categories {
			if canonical(k) == c {
				short = k
			}
		}
	}
	if short == "" {
		return nil, false
	}
	return fromTable(unicode.Categories[short]), true
}

func lookupScript(c string) (runeSet, bool) {
	if long, ok := scriptCodes[c]; ok {
		return fromTable(unicode.Scripts[long]), true
	}
	for k, tab := range unicode.Scripts {
		if canonical(k) == c {
			return fromTable(tab), true
		}
	}
	return nil, false
}

func lookupBinary(c string) (runeSet, bool) {
	if long, ok := propertyAliases[c]; ok {
		c = long
	}
	t := loadTables()
	switch c {
	case "alphabetic":
		return t.alphabetic, true
	case "uppercase":
		return fromTable(unicode.Lu).union(fromTable(unicode.Other_Uppercase)), true
	case "lowercase":
		return fromTable(unicode.Ll).union(fromTable(unicode.Other_Lowercase)), true
	case "math":
		return fromTable(unicode.Sm).union(fromTable(unicode.Other_Math)), true
	}
	for k, tab := range unicode.Properties {
		if !strings.HasPrefix(k, "Other_") && canonical(k) == c {
			return fromTable(tab), true
		}
	}
	return nil, false
}

// property resolves the body of \p{...} (or the letter of \pL) to a set.
// The reason is empty on success.
func property(body string) (runeSet, string) {
	const notFound, valueNotFound = "Unicode property not found", "Unicode property value not found"
	const unsupported = "Unicode property not supported by this search (it has no Go table)"
	name, value, hasValue := body, "", false
	negate := false
	for _, sep := range []string{"!=", ":", "="} {
		if i := strings.Index(body, sep); i >= 0 {
			name, value, hasValue = body[:i], body[i+len(sep):], true
			negate = sep == "!="
			break
		}
	}
	var s runeSet
	var ok bool
	if hasValue {
		n, v := canonical(name), canonical(value)
		switch n {
		case "generalcategory", "gc", "category":
			s, ok = lookupCategory(v)
		case "script", "sc":
			s, ok = lookupScript(v)
		default:
			if unsupportedProperties[n] {
				return nil, unsupported
			}
			return nil, notFound
		}
		if !ok {
			return nil, valueNotFound
		}
		if negate {
			s = s.negate()
		}
		return s, ""
	}
	c := canonical(name)
	if c != "cf" && c != "sc" && c != "lc" { // Rust looks for a binary property first
		if s, ok = lookupBinary(c); ok {
			return s, ""
		}
	}
	if s, ok = lookupCategory(c); ok {
		return s, ""
	}
	if s, ok = lookupScript(c); ok {
		return s, ""
	}
	if unsupportedProperties[c] {
		return nil, unsupported
	}
	return nil, notFound
}
