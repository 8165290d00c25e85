package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Two sessions of three calls each (read, edit, read), over both
// transports, against the real cmd/mcp.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED under -short: builds cmd/mcp and runs it")
	}
	if runtime.GOOS != "linux" {
		t.Skip("SKIPPED: the load generator reads /proc, which only Linux has")
	}
	bin := filepath.Join(t.TempDir(), "mcp")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/gordis-run/gordis/cmd/mcp").CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/mcp: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"--sessions", "2", "--calls", "3", "--transport", "http,stdio", "--settle", "0s", "--json", "--gordis", bin}
	if err := run(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var results []Result
	if err := json.Unmarshal(stdout.Bytes(), &results); err != nil {
		t.Fatalf("%v:\n%s", err, stdout.String())
	}
	if len(results) != 2 {
		t.Fatalf("%d results, want 2:\n%s", len(results), stdout.String())
	}
	for i, r := range results {
		if want := []string{"http", "stdio"}[i]; r.Transport != want {
			t.Errorf("result %d: transport %q, want %q", i, r.Transport, want)
		}
		if r.Errors != 0 || r.Lost != 0 {
			t.Errorf("%s: %d errors, %d lost updates: %q", r.Transport, r.Errors, r.Lost, r.FirstErrors)
		}
		if r.Sessions != 2 || r.Connect.Calls != 2 || r.Read.Calls != 4 || r.Edit.Calls != 2 {
			t.Errorf("%s: %d sessions, %d opened, %d reads, %d edits; want 2, 2, 4, 2", r.Transport, r.Sessions, r.Connect.Calls, r.Read.Calls, r.Edit.Calls)
		}
		if r.Read.P50 <= 0 || r.Read.P50 > r.Read.P99 || r.Read.P99 > r.Read.Max || r.CallsPerSecond <= 0 {
			t.Errorf("%s: read p50 %v, p99 %v, max %v, %.0f calls/s: not a measurement", r.Transport, r.Read.P50, r.Read.P99, r.Read.Max, r.CallsPerSecond)
		}
		// Any Go server holds a few MiB.
		if r.RSSOpen < 4<<20 || r.RSSPeak < r.RSSOpen {
			t.Errorf("%s: RSS open %d, peak %d bytes: not a server's", r.Transport, r.RSSOpen, r.RSSPeak)
		}
		if r.Transport == "http" && (r.RSSStart < 4<<20 || r.RSSAfter < 4<<20) {
			t.Errorf("http: RSS start %d, after %d bytes: not a server's", r.RSSStart, r.RSSAfter)
		}
	}
}
