package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/toolfs"
)

// quoted is printed by its own method: a copy cannot cut what it prints.
type quoted struct{ s string }

func (q quoted) MarshalJSON() ([]byte, error) { return json.Marshal(q.s) }

type inner struct{ Text string }

type withEmbedded struct {
	inner        // promoted: Text
	Name  string `json:"name"`
}

type withHidden struct {
	inner
	hidden string
}

type (
	named  string
	tagged struct {
		S string `json:",string"`
	}
	skipped struct {
		S string `json:"-"`
	}
	keyed    map[named]int
	wrapped  struct{ V any }
	pointers struct{ P, Q *string }
)

// printable cuts exactly what cutting the encoded text cut, and shares
// what holds no long string.
func TestPrintable(t *testing.T) {
	long := "a" + strings.Repeat("é", 3000) + "\n"
	short := "<b> & \u2028"
	after := strings.Repeat("line\n", 20000)
	for _, tc := range []struct {
		name string
		v    any
		cut  bool // printable copies a part of v
	}{
		{"nil", nil, false},
		{"short", map[string]any{"a": short, "b": []any{1, 2.5, true, nil}}, false},
		{"long string", long, true},
		{"named", named(long), true},
		{"write", &toolfs.WriteResult{Path: "/w/a.txt", Operation: "create", After: after}, true},
		{"edit", toolfs.EditResult{Path: "/w/a.txt", Before: long, After: short}, true},
		{"pointers", pointers{P: &long, Q: &short}, true},
		{"slice", []string{short, long, short, long}, true},
		{"array", [2]string{long, short}, true},
		{"map values and keys", map[string]string{long: short, "k": long}, true},
		{"named keys", keyed{named(long): 1, "x": 2}, true},
		{"int keys", map[int]string{1: long}, true},
		{"interface", wrapped{V: &inner{Text: long}}, true},
		{"embedded", withEmbedded{inner{long}, "n"}, true},
		{"unexported fields stay", withHidden{inner{long}, "h"}, true},
		{"number", json.Number("1" + strings.Repeat("0", 5000)), false},
		{"skipped", skipped{S: long}, false},
		{"marshaler, short", quoted{short}, false},
		{"marshaler, long", []any{quoted{long}}, false},
		{"time", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), false},
		{",string", tagged{S: long}, false},
		{"bytes, long", []byte(long), false},
		{"bytes, short", []byte(short), false},
		{"unexported embedded", struct{ inner }{inner{long}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, err := marshalText(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			want, err := boundStrings(text, maxValueString)
			if err != nil {
				t.Fatal(err)
			}
			p, err := printable(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := marshalText(p)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("printed\n%.300s\nwant\n%.300s", got, want)
			}
			_, raw := p.(json.RawMessage)
			if copied, _ := boundValue(tc.v, maxValueString); !raw && tc.cut != !same(copied, tc.v) {
				t.Errorf("copied %v, want %v", !same(copied, tc.v), tc.cut)
			}
		})
	}
}

// same reports whether a and b are the same value: equal where they are
// comparable, else of the same printed form and type.
func same(a, b any) (eq bool) {
	defer func() {
		if recover() != nil { // not comparable
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			eq = string(ja) == string(jb)
		}
	}()
	return a == b
}

func TestCutString(t *testing.T) {
	for _, tc := range []struct {
		s     string
		limit int
		want  string
	}{
		{"abcdef", 4, "abcd… (2 more bytes)"},
		{"ééé", 4, "éé… (2 more bytes)"},
		{"a€€", 5, "a€… (3 more bytes)"},
		{"\x80\x80\x80\x80\x80\x80", 4, "\x80\x80\x80\x80… (2 more bytes)"}, // no character to keep whole
		{"ab\xf0\x9f\x98\x80", 4, "ab… (4 more bytes)"},
	} {
		if got := cutString(tc.s, tc.limit); got != tc.want {
			t.Errorf("cutString(%q, %d) = %q, want %q", tc.s, tc.limit, got, tc.want)
		}
	}
}
