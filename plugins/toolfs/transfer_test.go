package toolfs

import "testing"

func TestTransferred(t *testing.T) {
	for _, tc := range []struct {
		name          string
		value         interface{ Transferred() (int64, int64) }
		read, written int64
	}{
		{"read", &ReadResult{Lines: []Line{{1, "héllo"}, {2, ""}}}, 8, 0},
		{"empty read", &ReadResult{}, 0, 0},
		{"write", &WriteResult{After: "a\nb\n", written: 6}, 0, 6},
		{"edit", &EditResult{After: "a\nb\n"}, 0, 4},
		{"streamed edit", &EditResult{Omitted: true}, 0, 0},
	} {
		if read, written := tc.value.Transferred(); read != tc.read || written != tc.written {
			t.Errorf("%s: Transferred() = %d, %d; want %d, %d", tc.name, read, written, tc.read, tc.written)
		}
	}
}
