package loader

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// debounce is how long the watcher waits after the last event for the
// file before it reloads: an editor's save is several events (write,
// chmod, or create and rename of a temporary file).
const debounce = 60 * time.Millisecond

// Watch reloads the file whenever it changes, until ctx ends or Close. It
// watches the file's directory, not the file, because editors replace a
// file by renaming another over it, which ends a watch on the file itself.
// It returns once the watch is in place; reload errors go to the log.
func (l *Loader) Watch(ctx context.Context) error {
	if l.isClosed() {
		return ErrClosed
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	name := filepath.Clean(l.file)
	if err := w.Add(filepath.Dir(name)); err != nil {
		_ = w.Close()
		return err
	}
	l.watchers.Add(1)
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
				if filepath.Clean(ev.Name) == name && !ev.Has(fsnotify.Chmod) {
					timer.Reset(debounce)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				l.log.Error("watching the config file", "file", l.file, "error", err)
			case <-timer.C:
				if err := l.Reload(); err != nil && err != ErrClosed {
					l.log.Error("config reload failed; the running plugins are unchanged", "file", l.file, "error", err)
				}
			}
		}
	}()
	return nil
}
