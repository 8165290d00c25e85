package loader

import (
	"fmt"
	"testing"
)

func TestExpand(t *testing.T) {
	t.Setenv("GORDIS_X", "x")
	t.Setenv("GORDIS_EMPTY", "")
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"${GORDIS_X}", "x"},
		{"a${GORDIS_X}b${GORDIS_X}c", "axbxc"},
		{"${GORDIS_UNSET:-def}", "def"},
		{"${GORDIS_UNSET:-}", ""},
		{"${GORDIS_EMPTY:-def}", "def"},
		{"${GORDIS_EMPTY}", ""},
		{"${GORDIS_X:-def}", "x"},
		{"${GORDIS_UNSET:-a:-b}", "a:-b"},
		{"$${GORDIS_X}", "${GORDIS_X}"},
		{"$$${GORDIS_X}", "$${GORDIS_X}"},
		{"$GORDIS_X {GORDIS_X}", "$GORDIS_X {GORDIS_X}"},
		{"${GORDIS_UNSET}", "error: environment variable GORDIS_UNSET is not set (${GORDIS_UNSET:-default} gives a default)"},
		{"${GORDIS_X", `error: unterminated ${ in "${GORDIS_X"`},
		{"${}", "error: bad variable reference ${}"},
		{"${1X}", "error: bad variable reference ${1X}"},
		{"${A-B}", "error: bad variable reference ${A-B}"},
	} {
		got, err := expand(tc.in)
		if err != nil {
			got = fmt.Sprint("error: ", err)
		}
		if got != tc.want {
			t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
