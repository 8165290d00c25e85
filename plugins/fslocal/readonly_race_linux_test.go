package fslocal

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gordis-run/gordis/internal/confine"
	"github.com/gordis-run/gordis/internal/confine/confinetest"
	"github.com/gordis-run/gordis/plugins/fs"
)

// TestReadOnlySwapRace: the workspace holds a read-only root, vendor, and a
// directory sw that another thread keeps exchanging with the symlink
// sw_alt -> vendor (renameat2 RENAME_EXCHANGE), while writes of sw/f and of
// new files in sw, and edits of sw/f, run. A symlink into vendor is a legal
// path, but nothing may be written under vendor through it, whatever the
// interleaving: no file there changes or appears, and no staging directory
// is left there or in sw. Every failure is a refusal, a miss of the edit, an
// edit found stale (it read vendor/f through the link, then found sw/f), or
// the retryable message of a path that changed under the call (issue 16,
// items 1 and 8): never a bare errno. Without openat2, os.Root's walk,
// which reads and stats go through, may also meet the swap half-way and
// report the file missing (FS_NOT_FOUND, or FS_STALE_VERSION for an
// edit; FS_NOT_DIRECTORY for a listing): counted, not failed, there.
// Reads, listings and stats through sw run beside them and succeed.
func TestReadOnlySwapRace(t *testing.T) {
	t.Run("openat2", func(t *testing.T) { raceReadOnly(t, false) })
	t.Run("os.Root", func(t *testing.T) {
		confine.SetOpenat2(false)
		defer confine.SetOpenat2(true)
		raceReadOnly(t, true)
	})
}

func raceReadOnly(t *testing.T, osRoot bool) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	vendor, sw := filepath.Join(ws, "vendor"), filepath.Join(ws, "sw")
	for _, dir := range []string{ws, vendor, filepath.Join(vendor, "sub"), sw, filepath.Join(sw, "sub")} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{vendor, sw} {
		write(t, filepath.Join(dir, "f"), "x\n", 0o644)
		write(t, filepath.Join(dir, "sub", "f"), "x\n", 0o644)
	}
	mustLink(t, "vendor", filepath.Join(ws, "sw_alt"))
	f := confined(t, Config{Cwd: ws, Roots: []Root{{Path: "vendor", ReadOnly: true}}})
	before := confinetest.Snapshot(t, vendor)

	rounds := 600
	if testing.Short() {
		rounds = 60
	}
	var calls, done, refused, changed, missed, stale, misread atomic.Int64
	var mu sync.Mutex
	raw := map[string]int{} // unexpected failures, by message tail
	ctx := context.Background()
	// Half the workers resolve each path as they go; the others resolved
	// theirs before the swaps began, so that every call of theirs stages
	// while the directory it resolved may be the link.
	paths := func(op string, w, i int) string {
		switch op {
		case "create":
			return "sw/new-" + strconv.Itoa(w) + "-" + strconv.Itoa(i)
		case "write sub":
			return "sw/sub/f"
		case "create sub":
			return "sw/sub/new-" + strconv.Itoa(w) + "-" + strconv.Itoa(i) + "/f"
		}
		return "sw/f"
	}
	ops := []string{"write", "edit", "create", "write sub", "create sub"}
	early := map[string]fs.Target{}
	for w, op := range ops {
		for i := range rounds {
			path := paths(op, w+len(ops), i)
			early[path] = mustResolve(t, f, path)
		}
	}
	stop := confinetest.Swap(t, sw, filepath.Join(ws, "sw_alt"))
	var wg sync.WaitGroup
	for w, op := range append(ops, ops...) {
		wg.Go(func() {
			for i := range rounds {
				path := paths(op, w, i)
				calls.Add(1)
				tg, err := early[path], error(nil)
				if w < len(ops) {
					tg, err = f.Resolve(ctx, path, "")
				}
				if err == nil {
					if op == "edit" {
						_, err = f.EditText(ctx, tg, fs.EditRequest{Old: "x", New: "y", ReplaceAll: true}, nil)
					} else {
						_, err = f.WriteText(ctx, tg, "x\n", nil)
					}
				}
				switch code, msg := fs.CodeOf(err), errMessage(err); {
				case err == nil:
					done.Add(1)
				case code == fs.CodeSandboxDenied && strings.HasSuffix(msg, `: the root "`+vendor+`" is read-only`):
					refused.Add(1)
				case code == fs.CodeIO && strings.HasSuffix(msg, ": "+pathChanged):
					changed.Add(1)
				case code == fs.CodeEditNotFound:
					missed.Add(1)
				case op == "edit" && code == fs.CodeStaleVersion && msg == `cannot edit "`+tg.Path+`": file changed since it was read`:
					stale.Add(1) // it read vendor/f through the link, and sw/f is there now
				case osRoot && (code == fs.CodeNotFound || code == fs.CodeStaleVersion):
					misread.Add(1)
				default:
					mu.Lock()
					raw[string(code)+" "+msg[strings.LastIndex(msg, `": `)+1:]]++
					mu.Unlock()
				}
			}
		})
	}
	// Readers of the same paths: a read, a listing, a stat and an lstat
	// through sw succeed, through the directory or through the link.
	var reads, misreads atomic.Int64
	for _, op := range []string{"read", "list", "stat", "lstat"} {
		wg.Go(func() {
			for range rounds {
				reads.Add(1)
				err := readThrough(ctx, f, op)
				switch code := fs.CodeOf(err); {
				case err == nil:
				case osRoot && (code == fs.CodeNotFound || code == fs.CodeNotDirectory):
					misreads.Add(1)
				default:
					msg := errMessage(err)
					mu.Lock()
					raw[op+": "+string(code)+" "+msg[strings.LastIndex(msg, `": `)+1:]]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	swaps := stop()
	t.Logf("%d reads, listings and stats through sw, %d misread by os.Root", reads.Load(), misreads.Load())
	t.Logf("%d swaps; %d calls: %d done, %d refused as read-only, %d changed under the call (retryable), %d edits found nothing, %d edits stale, %d misread by os.Root",
		swaps, calls.Load(), done.Load(), refused.Load(), changed.Load(), missed.Load(), stale.Load(), misread.Load())
	for tail, n := range raw {
		t.Errorf("%d results %s", n, tail)
	}
	after := confinetest.Snapshot(t, vendor)
	modified, created, lost := before.Diff(after)
	staging := 0
	for _, name := range created {
		if isStagingName(filepath.Base(name)) {
			staging++
		}
	}
	if len(modified)+len(created)+len(lost) > 0 {
		t.Errorf("under the read-only root: %d files modified %q, %d created (%d staging directories) %q, %d lost %q",
			len(modified), modified, len(created), staging, created[:min(len(created), 10)], len(lost), lost)
	}
	for name := range confinetest.Snapshot(t, ws) { // sw, whichever name it has now
		if isStagingName(filepath.Base(name)) {
			t.Errorf("staging directory %s left", name)
		}
	}
	if done.Load() == 0 || refused.Load() == 0 {
		t.Errorf("the race did not happen: %d done, %d refused", done.Load(), refused.Load())
	}
}

// readThrough runs the reading operation op on sw/sub (list) or sw/sub/f.
func readThrough(ctx context.Context, f *FS, op string) error {
	if op == "lstat" {
		_, err := f.Lstat(ctx, "sw/sub/f", "")
		return err
	}
	path := "sw/sub/f"
	if op == "list" {
		path = "sw/sub"
	}
	tg, err := f.Resolve(ctx, path, "")
	if err != nil {
		return err
	}
	switch op {
	case "read":
		_, err = f.ReadText(ctx, tg)
	case "list":
		_, err = f.ListDir(ctx, tg)
	default:
		_, err = f.Stat(ctx, tg)
	}
	return err
}

// errMessage is the message of a seam error, or err's text.
func errMessage(err error) string {
	if fe, ok := err.(*fs.Error); ok {
		return fe.Message
	}
	if err == nil {
		return ""
	}
	return err.Error()
}
