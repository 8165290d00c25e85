package agent

import "testing"

// Upstream passes invalid argument JSON on as a raw string (research §1.3),
// so the tool's own validation answers it; empty means no arguments.
func TestCallArgs(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "{}"},
		{`{"path":"."}`, `{"path":"."}`},
		{`{"path":`, `"{\"path\":"`},
		{`[1]`, `[1]`},
	}
	for _, tt := range tests {
		if got := string(callArgs(tt.in)); got != tt.want {
			t.Errorf("callArgs(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
