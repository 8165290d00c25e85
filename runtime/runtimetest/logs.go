package runtimetest

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
)

// Record is one log record, flattened for assertions.
type Record struct {
	Level   slog.Level
	Message string
	// Attrs holds every attribute, the logger's and the record's, as text
	// (slog.Value.String); keys inside a group are prefixed "group.".
	Attrs map[string]string
}

// Logs is a slog.Handler that records everything at every level, for tests
// that assert on what was logged:
//
//	logs := runtimetest.NewLogs()
//	root := runtimetest.New(t, runtime.WithLogger(slog.New(logs)))
//
// It is safe for concurrent use; handlers derived with WithAttrs and
// WithGroup record into the same list.
type Logs struct {
	store  *store
	attrs  map[string]string // from WithAttrs, already prefixed
	prefix string            // from WithGroup: "a.b."
}

type store struct {
	mu      sync.Mutex
	records []Record
}

var _ slog.Handler = (*Logs)(nil)

// NewLogs returns an empty recorder.
func NewLogs() *Logs { return &Logs{store: new(store)} }

// Records returns a copy of what was logged so far, oldest first.
func (l *Logs) Records() []Record {
	l.store.mu.Lock()
	defer l.store.mu.Unlock()
	return slices.Clone(l.store.records)
}

// Enabled reports true: every level is recorded.
func (l *Logs) Enabled(context.Context, slog.Level) bool { return true }

// Handle records r.
func (l *Logs) Handle(_ context.Context, r slog.Record) error {
	rec := Record{Level: r.Level, Message: r.Message, Attrs: make(map[string]string, len(l.attrs)+r.NumAttrs())}
	maps.Copy(rec.Attrs, l.attrs)
	r.Attrs(func(a slog.Attr) bool {
		flatten(rec.Attrs, l.prefix, a)
		return true
	})
	l.store.mu.Lock()
	l.store.records = append(l.store.records, rec)
	l.store.mu.Unlock()
	return nil
}

// WithAttrs returns a handler that adds attrs to every record.
func (l *Logs) WithAttrs(attrs []slog.Attr) slog.Handler {
	merged := maps.Clone(l.attrs)
	if merged == nil {
		merged = make(map[string]string, len(attrs))
	}
	for _, a := range attrs {
		flatten(merged, l.prefix, a)
	}
	return &Logs{store: l.store, attrs: merged, prefix: l.prefix}
}

// WithGroup returns a handler that puts later attributes in group name.
func (l *Logs) WithGroup(name string) slog.Handler {
	if name == "" {
		return l
	}
	return &Logs{store: l.store, attrs: l.attrs, prefix: l.prefix + name + "."}
}

// flatten adds a to m under prefix, a group's members under "key.".
func flatten(m map[string]string, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() != slog.KindGroup {
		if !a.Equal(slog.Attr{}) {
			m[prefix+a.Key] = v.String()
		}
		return
	}
	if a.Key != "" { // an empty key inlines the group's members
		prefix += a.Key + "."
	}
	for _, member := range v.Group() {
		flatten(m, prefix, member)
	}
}
