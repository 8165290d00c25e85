package toolfs

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// toolset is one application of the plugin: its config, the runtime context
// its events are dispatched on, and the line indexes of large files it read.
type toolset struct {
	rt       *runtime.Context
	cfg      Config
	caps     windowCaps
	lines    *lineCache
	listings *listCache
}

func newToolset(rt *runtime.Context, cfg Config) *toolset {
	return &toolset{
		rt:       rt,
		cfg:      cfg,
		caps:     windowCaps{maxRunes: cfg.ReadMaxLineLength, maxBytes: cfg.ReadMaxBytes},
		lines:    newLineCache(),
		listings: newListCache(),
	}
}

// resolve refuses a call that asks for sandbox escalation, then turns a
// path into a target against the calling session's workspace, with the
// provider the plugin currently injects.
func (t *toolset) resolve(ctx context.Context, call *registry.Call, path string) (fs.FileSystem, fs.Target, error) {
	if err := escalation(call.Args); err != nil {
		return nil, fs.Target{}, err
	}
	fsys, err := fs.Service.Get(t.rt)
	if err != nil {
		return nil, fs.Target{}, err
	}
	target, err := fsys.Resolve(ctx, path, SessionCwd(call, path))
	return fsys, target, err
}

// observed announces that call saw target at v, after a successful read,
// write or edit. Listeners are recorders; an error one returns becomes the
// call's error even though the operation already happened. They are
// awaited no longer than ctx lasts: one still running then is abandoned
// (registry.Await logs it) and the operation's outcome stands, for the
// registry to report as it reports any body that outlives its context
//
func (t *toolset) observed(ctx context.Context, call *registry.Call, target fs.Target, v fs.Version) error {
	o := fs.Observation{Target: target, Version: v, Actor: call}.WithContext(ctx)
	_, err := registry.Await(ctx, t.rt.Logger(), fs.ObservedEvent.Name(), call, func() (struct{}, error) {
		return struct{}{}, fs.ObservedEvent.Emit(t.rt, o)
	})
	if errors.Is(err, registry.ErrAbandoned) {
		return nil
	}
	return err
}

// SessionCwd is the directory the file tools resolve path against for call:
// the calling session's workspace ("" lets the provider use its own). When
// the workspace or the request walks up with "..", the workspace is replaced
// by its real path so ".." means the real parent; an ordinary request keeps
// the workspace's own spelling in every message. Plugins that check a tool
// call's path (a permission rule, say) must resolve it the same way, or they
// judge a different file than the tool touches.
func SessionCwd(call *registry.Call, path string) string {
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

// quoted puts a path in double quotes, clipped by fs.Clip, as every message does.
func quoted(path string) string { return `"` + fs.Clip(path) + `"` }
