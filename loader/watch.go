package loader

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// debounce is how long the watcher waits after the last event before it
// looks at the file: an editor's save is several events (write, chmod, or
// create and rename of a temporary file).
const debounce = 60 * time.Millisecond

// Watch reloads the file whenever it changes, until ctx ends or Close. It
// watches the file's directory, not the file: editors save by renaming a
// new file over the old one, which ends a watch on the file itself, and a
// Kubernetes ConfigMap volume swaps a symbolic link to a directory of
// files, with no event naming the file at all. So any event in the
// directory makes the watcher look, and it reloads when the file it finds
// (through links) holds other bytes than the last read found. When the
// file is a link to a file in another directory, that directory is
// watched too. It returns once the watch is in place; reload errors go to
// the log.
func (l *Loader) Watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	dir := filepath.Dir(l.file)
	if err := w.Add(dir); err != nil {
		_ = w.Close()
		return err
	}
	base, _ := filepath.EvalSymlinks(dir)
	followed := follow(w, l.file, base, "")
	// Under mu, so that a Close that has begun waiting for the watchers
	// cannot miss this one.
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		_ = w.Close()
		return ErrClosed
	}
	l.watchers.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.watchers.Done()
		defer w.Close()
		timer := time.NewTimer(debounce)
		timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-l.done:
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if !ev.Has(fsnotify.Chmod) {
					timer.Reset(debounce)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				l.log.Error("watching the config file", "file", l.file, "error", err)
			case <-timer.C:
				followed = follow(w, l.file, base, followed)
				if l.unchanged() {
					continue
				}
				switch applied, err := l.reload(); {
				case err == nil || errors.Is(err, ErrClosed):
				case applied:
					l.log.Error("config reloaded, but entries failed to apply", "file", l.file, "error", err)
				default:
					l.log.Error("config reload failed; the running plugins are unchanged", "file", l.file, "error", err)
				}
			}
		}
	}()
	return nil
}

// follow watches the directory of the file that file's links lead to,
// when it is not base (file's own directory, resolved): editors save a
// link's target by renaming a new file over it there, with no event in
// base. It returns the directory it now watches ("" for none), having
// dropped followed, the one before.
func follow(w *fsnotify.Watcher, file, base, followed string) string {
	target, err := filepath.EvalSymlinks(file)
	if err != nil {
		return followed // missing for now: keep what is watched
	}
	d := filepath.Dir(target)
	if d == followed {
		return followed
	}
	if followed != "" {
		_ = w.Remove(followed) // gone already when a ConfigMap swapped it out
	}
	if d == base || w.Add(d) != nil {
		return ""
	}
	return d
}

// unchanged reports whether the file holds what the last read (by Open,
// Reload or a watcher) found, or is still missing. Content, not size and
// time: two saves within one tick of the file system's clock can leave
// both the same.
func (l *Loader) unchanged() bool {
	src, err := os.ReadFile(l.file)
	l.mu.Lock()
	defer l.mu.Unlock()
	return (err == nil) == l.seenOK && bytes.Equal(src, l.seen)
}
