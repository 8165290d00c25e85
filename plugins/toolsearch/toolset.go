package toolsearch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/toolfs"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// toolset is one application of the plugin: its limits and the runtime
// context its provider is looked up on.
type toolset struct {
	rt  *runtime.Context
	cfg Config
}

// scope is where one call searches: the root as the model spelled it and
// as the provider resolved it, and the workspace that globs are matched
// against and absolute paths are shown relative to.
type scope struct {
	fsys    fs.FileSystem
	spelled string // the path argument; "" when omitted
	root    fs.Target
	ws      string // the workspace's display path
	rel     string // root below ws, "/"-separated and clean; "" for ws itself
}

// resolve resolves the root (path, or the session workspace) and the
// workspace against the calling session, with the provider the plugin
// currently injects. A refused root is the provider's error; a root below
// a file is S-024's failure.
func (t *toolset) resolve(ctx context.Context, call *registry.Call, tool, path string) (*scope, error) {
	fsys, err := fs.Service.Get(t.rt)
	if err != nil {
		return nil, err
	}
	s := &scope{fsys: fsys, spelled: path}
	cwd := toolfs.SessionCwd(call, path)
	ws, err := fsys.Resolve(ctx, ".", cwd)
	if err != nil {
		return nil, s.resolveError(ctx, tool, err)
	}
	s.ws, s.root = ws.Path, ws
	if path != "" {
		if s.root, err = fsys.Resolve(ctx, path, cwd); err != nil {
			return nil, s.resolveError(ctx, tool, err)
		}
	}
	if r, err := filepath.Rel(s.ws, s.root.Path); err == nil && r != "." {
		s.rel = filepath.ToSlash(r)
	}
	return s, nil
}

// resolveError maps a failed resolve: cancellation as aborted, a refused
// root as the provider words it (S-020), and a root the system cannot
// reach (a parent that is not a directory, a symlink loop, a name too
// long) as rg's failure to open it (S-024).
func (s *scope) resolveError(ctx context.Context, tool string, err error) error {
	var errno syscall.Errno
	switch {
	case ctx.Err() != nil:
		return aborted(tool, ctx.Err())
	case fs.CodeOf(err) == fs.CodeNotFound:
		return s.missing(tool, err, "Not a directory (os error 20)")
	case fs.CodeOf(err) != fs.CodeSandboxDenied && errors.As(err, &errno):
		return s.missing(tool, err, osErrorText(errno))
	}
	return err
}

// osErrorText words errno as Rust's io::Error does: the C library's
// message (Go's, capitalised) and the number.
func osErrorText(errno syscall.Errno) string {
	msg := errno.Error()
	if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	return fmt.Sprintf("%s (os error %d)", msg, int(errno))
}

// missing is rg's failure for a root it cannot open, naming the root as
// the model gave it.
func (s *scope) missing(tool string, cause error, reason string) error {
	p := fs.Clip(s.spelled)
	if p == "" {
		p = "."
	}
	return searchFailed(tool, p+": IO error for operation on "+p+": "+reason, cause)
}

// walkError is the failure of a walk: a missing root (before any entry
// was visited) as rg words it, a cancellation or the deadline as aborted,
// anything else (an unreadable directory, a vanished file) as rg's exit 2.
func (s *scope) walkError(ctx context.Context, tool string, err error, visited bool) error {
	switch {
	case ctx.Err() != nil:
		return aborted(tool, ctx.Err())
	case fs.CodeOf(err) == fs.CodeAborted:
		return aborted(tool, err)
	case !visited && fs.CodeOf(err) == fs.CodeNotFound:
		return s.missing(tool, err, "No such file or directory (os error 2)")
	}
	if _, ok := err.(*SearchError); ok {
		return err
	}
	if fe, ok := err.(*fs.Error); ok {
		return searchFailed(tool, fe.Message, err)
	}
	return err
}

// display is the path the model sees for the entry sub below the root
// ("" for the root itself): the root as spelled joined with sub, and then,
// for an absolute spelling, relative to the workspace. A name that is not
// valid UTF-8 shows U+FFFD for each bad byte.
func (s *scope) display(sub string) string {
	var p string
	switch {
	case s.spelled == "":
		p = sub
	case filepath.IsAbs(s.spelled):
		p = workdirRelative(s.ws, join(s.spelled, sub))
	default:
		p = join(s.spelled, sub)
	}
	return validName(p)
}

// match is the workspace-relative path of sub that globs are matched
// against.
func (s *scope) match(sub string) string {
	switch {
	case s.rel == "":
		return sub
	case sub == "":
		return s.rel
	}
	return s.rel + "/" + sub
}

// join appends sub to a path as spelled, adding a separator only when the
// path does not end with one.
func join(p, sub string) string {
	switch {
	case sub == "":
		return p
	case strings.HasSuffix(p, "/"):
		return p + sub
	}
	return p + "/" + sub
}

// workdirRelative shows an absolute path relative to the workspace, as
// Node's path.relative does: "." for the workspace itself, and the path
// unchanged when it lies outside.
func workdirRelative(ws, abs string) string {
	r, err := filepath.Rel(ws, abs)
	switch {
	case err != nil || r == ".." || strings.HasPrefix(r, "../"):
		return abs
	}
	return filepath.ToSlash(r)
}

// validName replaces each byte that is not part of valid UTF-8 with U+FFFD.
func validName(p string) string {
	if utf8.ValidString(p) {
		return p
	}
	var b strings.Builder
	b.Grow(len(p) + 8)
	for _, r := range p {
		b.WriteRune(r)
	}
	return b.String()
}

// valueRoot is glob's value.root: "." without path, otherwise the path
// relative to the workspace when absolute, as spelled when not.
func (s *scope) valueRoot() string {
	switch {
	case s.spelled == "":
		return "."
	case filepath.IsAbs(s.spelled):
		return workdirRelative(s.ws, s.spelled)
	}
	return s.spelled
}
