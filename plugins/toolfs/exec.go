package toolfs

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// toolset is one application of the plugin: its config, the runtime context
// its events are dispatched on, and the line indexes of large files it read.
type toolset struct {
	rt    *runtime.Context
	cfg   Config
	caps  windowCaps
	lines *lineCache
}

func newToolset(rt *runtime.Context, cfg Config) *toolset {
	return &toolset{
		rt:    rt,
		cfg:   cfg,
		caps:  windowCaps{maxRunes: cfg.ReadMaxLineLength, maxBytes: cfg.ReadMaxBytes},
		lines: newLineCache(),
	}
}

// resolve validates nothing: it turns a path into a target against the
// calling session's workspace.
func (t *toolset) resolve(ctx context.Context, call *registry.Call, path string) (fs.FileSystem, fs.Target, error) {
	fsys, err := fs.Service.Get(t.rt)
	if err != nil {
		return nil, fs.Target{}, err
	}
	target, err := fsys.Resolve(ctx, path, sessionCwd(call, path))
	return fsys, target, err
}

// list is one ListDir: no stat, and no observation (a listing reads no
// content, so it must not satisfy the read-before-write policy).
func (t *toolset) list(ctx context.Context, call *registry.Call, args listArgs) (*ListResult, error) {
	req, err := args.parse()
	if err != nil {
		return nil, err
	}
	fsys, target, err := t.resolve(ctx, call, req.path)
	if err != nil {
		return nil, err
	}
	children, err := fsys.ListDir(ctx, target)
	if err != nil {
		return nil, err
	}
	return listPage(target.Path, children, req.offset, t.cfg.ListMaxEntries)
}

// listPage orders the children and cuts the requested page.
func listPage(path string, children []fs.DirEntry, offset, pageSize int) (*ListResult, error) {
	entries := make([]ListEntry, len(children))
	r := &ListResult{Path: path, Offset: offset, TotalEntries: len(children)}
	for i, c := range children {
		entries[i] = ListEntry{Name: c.Name, Type: entryType(c.Type)}
		switch entries[i].Type {
		case fs.TypeDirectory:
			r.Counts.Directories++
		case fs.TypeFile:
			r.Counts.Files++
		default:
			r.Counts.Other++
		}
	}
	if offset > len(entries) && !(offset == 1 && len(entries) == 0) {
		return nil, fs.Errorf(fs.CodeNotFound, "offset %d is out of range for %s (%d entries)", offset, quoted(path), len(entries))
	}
	orderEntries(entries)
	r.Entries = entries[offset-1 : min(offset-1+pageSize, len(entries))]
	return r, nil
}

// quoted puts a path in double quotes verbatim, as every message does.
func quoted(path string) string { return `"` + path + `"` }

// read is one Stat, then ReadText or StreamText, then the window, then the
// observation of the version that stat saw.
func (t *toolset) read(ctx context.Context, call *registry.Call, args readArgs) (*ReadResult, error) {
	req, err := args.parse(t.cfg.ReadLimit)
	if err != nil {
		return nil, err
	}
	fsys, target, err := t.resolve(ctx, call, req.path)
	if err != nil {
		return nil, err
	}
	info, err := fsys.Stat(ctx, target)
	if err != nil {
		return nil, err
	}
	if info == nil {
		return nil, fs.Errorf(fs.CodeNotFound, "cannot read %s: not found", quoted(target.Path))
	}
	if info.Type != fs.TypeFile {
		return nil, fs.Errorf(fs.CodeNotRegularFile, "cannot read %s: not a regular file", quoted(target.Path))
	}
	lines, total, err := t.window(ctx, fsys, target, info, req)
	if err != nil {
		return nil, err
	}
	r, err := readPage(target.Path, req, lines, total)
	if err != nil {
		return nil, err
	}
	if err := fs.ObservedEvent.Emit(t.rt, fs.Observation{Target: target, Version: info.Version, Actor: call}); err != nil {
		return nil, err
	}
	return r, nil
}

// readPage checks the offset against the exact total (offset 1 is valid on
// an empty file) and builds the value.
func readPage(path string, req readRequest, lines []Line, total int) (*ReadResult, error) {
	if req.offset > total && !(req.offset == 1 && total == 0) {
		return nil, fs.Errorf(fs.CodeNotFound, "offset %d is out of range for %s (%d lines)", req.offset, quoted(path), total)
	}
	if lines == nil {
		lines = []Line{}
	}
	return &ReadResult{Path: path, Offset: req.offset, Lines: lines, TotalLines: total, limit: req.limit}, nil
}

// window reads the page and the exact line count. Small files are read
// whole. Large or unsized ones stream; when the provider can stream from an
// offset at a pinned version, a full scan also records a line index so that
// later pages of the same version read only about the page.
func (t *toolset) window(ctx context.Context, fsys fs.FileSystem, target fs.Target, info *fs.Info, req readRequest) ([]Line, int, error) {
	if info.Size >= 0 && info.Size < t.cfg.ReadStreamMinSize {
		text, err := fsys.ReadText(ctx, target)
		if err != nil {
			return nil, 0, err
		}
		w := newWindow(t.caps, req.offset, req.limit, 1, 0, nil)
		// The window only reads its input, so it can see the string's bytes.
		w.feed(unsafe.Slice(unsafe.StringData(text), len(text)))
		total := w.finish()
		return w.lines, total, nil
	}
	if seeker, ok := fsys.(fs.TextSeeker); ok && info.Version != "" {
		key := cacheKey{target.Key, info.Version}
		if idx := t.lines.get(key); idx != nil {
			if req.offset > idx.total {
				return nil, idx.total, nil
			}
			line, pos := idx.start(req.offset)
			w := newWindow(t.caps, req.offset, req.limit, line, pos, nil)
			err := t.pumpFrom(ctx, seeker, target, info.Version, pos, w, true)
			if err == nil {
				w.finish()
				return w.lines, idx.total, nil
			}
			if !errors.Is(err, &fs.Error{Code: fs.CodeStaleVersion}) {
				return nil, 0, err
			}
		} else {
			index := newIndexBuilder()
			w := newWindow(t.caps, req.offset, req.limit, 1, 0, index)
			err := t.pumpFrom(ctx, seeker, target, info.Version, 0, w, false)
			if err == nil {
				total := w.finish()
				t.lines.put(key, index.freeze(total))
				return w.lines, total, nil
			}
			if !errors.Is(err, &fs.Error{Code: fs.CodeStaleVersion}) {
				return nil, 0, err
			}
		}
		// The file changed after the stat: read whatever is there now, as an
		// unpinned stream would, and index nothing.
	}
	r, err := fsys.StreamText(ctx, target)
	if err != nil {
		return nil, 0, err
	}
	w := newWindow(t.caps, req.offset, req.limit, 1, 0, nil)
	if err := pump(r, w, false); err != nil {
		return nil, 0, err
	}
	total := w.finish()
	return w.lines, total, nil
}

func (t *toolset) pumpFrom(ctx context.Context, s fs.TextSeeker, target fs.Target, v fs.Version, pos int64, w *window, stopWhenFull bool) error {
	r, err := s.StreamTextFrom(ctx, target, v, pos)
	if err != nil {
		return err
	}
	return pump(r, w, stopWhenFull)
}

// errPageDone stops a stream once the page is complete (the total is known).
var errPageDone = errors.New("toolfs: page complete")

// pageWriter feeds a window as an io.Writer, so that io.Copy hands it the
// provider's own buffer when the stream implements io.WriterTo (no copy).
type pageWriter struct {
	w            *window
	stopWhenFull bool
}

func (p pageWriter) Write(b []byte) (int, error) {
	p.w.feed(b)
	if p.stopWhenFull && p.w.full {
		return len(b), errPageDone
	}
	return len(b), nil
}

// pump feeds the stream to the window and closes it. With stopWhenFull it
// stops once the page is complete.
func pump(r io.ReadCloser, w *window, stopWhenFull bool) error {
	defer r.Close()
	_, err := io.Copy(pageWriter{w, stopWhenFull}, r)
	if err == errPageDone {
		return nil
	}
	return err
}

// write asks the single decision slot for a guard (none without a policy),
// writes, and records the post-write version. The tool itself never stats.
func (t *toolset) write(ctx context.Context, call *registry.Call, args writeArgs) (*WriteResult, error) {
	if err := args.validate(); err != nil {
		return nil, err
	}
	fsys, target, err := t.resolve(ctx, call, args.FilePath)
	if err != nil {
		return nil, err
	}
	intent, err := fs.WriteIntentEvent.Run(t.rt, fs.IntentRequest{Target: target, Actor: call},
		func() (*fs.WriteIntent, error) { return nil, nil })
	if err != nil {
		return nil, err
	}
	out, err := fsys.WriteText(ctx, target, args.Content, intent)
	if err != nil {
		return nil, err
	}
	if err := fs.ObservedEvent.Emit(t.rt, fs.Observation{Target: target, Version: out.Version, Actor: call}); err != nil {
		return nil, err
	}
	return &WriteResult{Path: target.Path, Operation: out.Operation, Before: out.Before, After: out.After}, nil
}

// edit is write's twin over EditText.
func (t *toolset) edit(ctx context.Context, call *registry.Call, args editArgs) (*EditResult, error) {
	if err := args.validate(); err != nil {
		return nil, err
	}
	fsys, target, err := t.resolve(ctx, call, args.FilePath)
	if err != nil {
		return nil, err
	}
	intent, err := fs.EditIntentEvent.Run(t.rt, fs.IntentRequest{Target: target, Actor: call},
		func() (*fs.EditIntent, error) { return nil, nil })
	if err != nil {
		return nil, err
	}
	out, err := fsys.EditText(ctx, target, fs.EditRequest{Old: args.OldString, New: args.NewString, ReplaceAll: args.ReplaceAll}, intent)
	if err != nil {
		return nil, err
	}
	if err := fs.ObservedEvent.Emit(t.rt, fs.Observation{Target: target, Version: out.Version, Actor: call}); err != nil {
		return nil, err
	}
	return &EditResult{Path: target.Path, Before: out.Before, After: out.After, replaceAll: args.ReplaceAll}, nil
}

// sessionCwd is the calling session's workspace ("" lets the provider use
// its own). When the workspace or the request walks up with "..", the
// workspace is replaced by its real path so ".." means the real parent; an
// ordinary request keeps the workspace's own spelling in every message.
func sessionCwd(call *registry.Call, path string) string {
	if call == nil || call.Session == nil {
		return ""
	}
	cwd := call.Session.Cwd()
	if cwd == "" || !(hasParentSegment(cwd) || hasParentSegment(path)) {
		return cwd
	}
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		return real
	}
	return cwd
}

// hasParentSegment reports a ".." segment, with "/" or "\" as separators.
func hasParentSegment(p string) bool {
	for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return true
		}
	}
	return false
}
