//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/internal/confine/confinetest"
)

// TestReplayReadOnlySwapRace is issue 16's repro through `demo replay
// --read-only-root vendor --no-policy`: while the workspace's directory sw
// is exchanged with the symlink sw_alt -> vendor over and over (renameat2
// RENAME_EXCHANGE), writes of sw/f, edits of sw/f and writes of new files
// in sw run. Nothing under vendor may change or appear (no staging
// directory either, there or anywhere), and every failure is the
// read-only refusal, an edit that found nothing or found the file changed
// since it read it, or the retryable message of a path that changed under
// the call: never a bare errno.
func TestReplayReadOnlySwapRace(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	vendor, sw := filepath.Join(ws, "vendor"), filepath.Join(ws, "sw")
	for _, dir := range []string{vendor, sw} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("vendor", filepath.Join(ws, "sw_alt")); err != nil {
		t.Fatal(err)
	}
	rounds := 1000
	if testing.Short() {
		rounds = 100
	}
	var input strings.Builder
	for i := range rounds {
		input.WriteString(`{"tool":"write","args":{"file_path":"sw/f","content":"x\n"}}` + "\n")
		input.WriteString(`{"tool":"edit","args":{"file_path":"sw/f","old_string":"x","new_string":"y","replace_all":true}}` + "\n")
		input.WriteString(`{"tool":"write","args":{"file_path":"sw/new-` + strconv.Itoa(i) + `","content":"x\n"}}` + "\n")
	}
	before := confinetest.Snapshot(t, vendor)
	stop := confinetest.Swap(t, sw, filepath.Join(ws, "sw_alt"))
	code, stdout, stderr := replay(t, input.String(), "--workspace", ws, "--read-only-root", "vendor", "--no-policy")
	swaps := stop()
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}

	readOnly := `: the root "` + vendor + `" is read-only`
	const changed = ": a directory on the path was replaced during the call; retry"
	counts := map[string]int{}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	for _, line := range lines {
		var r struct {
			Tool    string
			IsError bool
			Error   struct{ Message, Code string }
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		switch msg := r.Error.Message; {
		case !r.IsError:
			counts["done"]++
		case r.Error.Code == "FS_SANDBOX_DENIED" && strings.HasSuffix(msg, readOnly):
			counts["refused as read-only"]++
		case r.Error.Code == "FS_IO_ERROR" && strings.HasSuffix(msg, changed):
			counts["changed under the call"]++
		case r.Error.Code == "FS_EDIT_NOT_FOUND":
			counts["edit found nothing"]++
		case r.Tool == "edit" && r.Error.Code == "FS_STALE_VERSION" && strings.HasSuffix(msg, `": file changed since it was read`):
			counts["edit found stale"]++ // it read vendor/f through the link, then found sw/f
		default:
			counts["unexpected"]++
			if counts["unexpected"] <= 5 {
				t.Errorf("unexpected result: %s", line)
			}
		}
	}
	t.Logf("%d swaps; %d calls: %v", swaps, len(lines), counts)
	if len(lines) != 3*rounds {
		t.Errorf("%d results for %d calls", len(lines), 3*rounds)
	}
	modified, created, lost := before.Diff(confinetest.Snapshot(t, vendor))
	if len(modified)+len(created)+len(lost) > 0 {
		t.Errorf("under the read-only root: %d modified %q, %d created %q..., %d lost %q",
			len(modified), modified, len(created), created[:min(len(created), 10)], len(lost), lost)
	}
	var staging []string
	for name := range confinetest.Snapshot(t, ws) {
		if strings.HasPrefix(filepath.Base(name), ".gordis-staging-") {
			staging = append(staging, name)
		}
	}
	if len(staging) > 0 {
		t.Errorf("%d staging directories left: %q...", len(staging), staging[:min(len(staging), 5)])
	}
	if counts["done"] == 0 || counts["refused as read-only"] == 0 {
		t.Errorf("the race did not happen: %v", counts)
	}
}
