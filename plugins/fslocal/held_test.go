package fslocal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
)

// A replacing write reads Before up to maxHeldText; above it Before is nil
// and the outcome says it was omitted.
func TestWriteOmitsLargeBefore(t *testing.T) {
	f, root := fixture(t)
	path := filepath.Join(root, "a.txt")
	held := strings.Repeat("x\r\n", maxHeldText/3) + "x"[:maxHeldText%3]
	for _, tc := range []struct {
		name, prior string
		before      *string
		omitted     bool
	}{
		{"at the cap", held, ptr(strings.ReplaceAll(held, "\r\n", "\n")), false},
		{"above the cap", held + "y", nil, true},
	} {
		write(t, path, tc.prior, 0o644)
		out, err := f.WriteText(context.Background(), mustResolve(t, f, path), "new\n", nil)
		if err != nil {
			t.Fatal(err)
		}
		if out.Operation != fs.OpUpdate || out.After != "new\n" || out.Omitted != tc.omitted ||
			(out.Before == nil) != (tc.before == nil) || (out.Before != nil && *out.Before != *tc.before) {
			t.Errorf("%s: outcome %+v, want Before %v and Omitted %v", tc.name, out, tc.before != nil, tc.omitted)
		}
		if b, _ := os.ReadFile(path); string(b) != "new\n" {
			t.Errorf("%s: stored %q", tc.name, b)
		}
	}
}

func ptr[T any](v T) *T { return &v }
