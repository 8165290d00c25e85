// Package auditlog is an example third-party plugin written only against
// the public API: an asynchronous observer of tools/result that appends one
// JSON line per finished tool call to a file. It never slows or fails a call:
// observers run on the runtime's observation bus, off the caller's path.
//
// The log records what happened, not what was said: the tool, the call id,
// and the error's code and message, never arguments or file contents.
package auditlog

import (
	"encoding/json"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// Config names the log file.
type Config struct {
	// Path is the log file: created if missing (mode 0600), then appended to.
	Path string `json:"path" jsonschema:"minLength=1"`
}

// Entry is one line of the log.
type Entry struct {
	Time    time.Time `json:"time"`
	Call    string    `json:"call"`
	Tool    string    `json:"tool"`
	IsError bool      `json:"isError"`
	Code    string    `json:"code,omitempty"`
	Message string    `json:"message,omitempty"`
}

// Plugin opens the log; disposing the plugin closes it.
var Plugin = runtime.Constructor("auditlog", Open)

// Log is an open audit log.
type Log struct {
	root   *runtime.Context // flushed on Close
	logger *slog.Logger

	mu     sync.Mutex // serialises writes with Close
	file   *os.File
	closed bool
}

// Open opens the log file and observes tools/result on ctx.
func Open(ctx *runtime.Context, cfg Config) (*Log, error) {
	file, err := os.OpenFile(cfg.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	l := &Log{root: ctx.Root(), logger: ctx.Logger(), file: file}
	// Returned with the error, l is still closed by the runtime.
	return l, registry.ResultEvent.Observe(ctx, l.record)
}

// record runs on the observation bus, one result at a time, in emit order.
func (l *Log) record(r *registry.Result) {
	e := Entry{Time: time.Now().UTC(), Call: r.CallID, Tool: r.Tool, IsError: r.IsError}
	if r.Error != nil {
		e.Code, e.Message = r.Error.Code, r.Error.Message
	}
	line, err := json.Marshal(e)
	if err != nil {
		l.logger.Warn("auditlog: cannot encode an entry", "err", err)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// Close has flushed what was emitted before it; a result emitted after
	// that (while the plugin is torn down) is dropped, never written to a
	// closed file.
	if l.closed {
		return
	}
	if _, err := l.file.Write(append(line, '\n')); err != nil {
		l.logger.Warn("auditlog: cannot write an entry", "err", err)
	}
}

// Close waits until the results emitted so far are recorded (observers are
// asynchronous: an audit log must not lose the last calls), then closes the
// file. It must not be called from an observer, which Flush would wait for.
func (l *Log) Close() error {
	l.root.Flush()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	return l.file.Close()
}
