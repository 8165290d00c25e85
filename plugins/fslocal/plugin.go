package fslocal

import (
	"context"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/runtime"
)

// Config configures the plugin.
type Config struct {
	// Cwd is the workspace: the directory relative paths resolve against
	// when the caller gives none, and (unless Unconfined) the tree the
	// provider is confined to. Empty means the process working directory
	// when the plugin is applied.
	Cwd string `json:"cwd,omitempty"`
	// Unconfined lets paths reach anywhere the process may: absolute
	// paths, "..", and symlinks that leave the workspace. By default every
	// path must stay inside Cwd or one of Roots (FS_SANDBOX_DENIED).
	Unconfined bool `json:"unconfined,omitempty"`
	// Roots are directories allowed besides Cwd. One inside Cwd marks that
	// subtree: a read-only root there makes it read-only, whatever path
	// leads into it.
	Roots []Root `json:"roots,omitempty"`
}

// Root is one more directory the provider may reach.
type Root struct {
	// Path is the directory; a relative one resolves against Cwd.
	Path string `json:"path" jsonschema:"minLength=1"`
	// ReadOnly allows list and read under Path, but no write or edit.
	ReadOnly bool `json:"readOnly,omitempty"`
}

// Plugin provides Open(Config) as the "fs" service (fs.Service): confined
// to the workspace and Roots unless Unconfined. Disposing the plugin
// (also to restart it) closes the provider: the calls in flight finish
// first, at most closeWait, and later ones fail with [ErrClosed] (see
// [FS.Close]). It sweeps the roots when it starts (see
// [FS.SweepRoots]); a failed sweep is logged, and the plugin starts.
var Plugin = runtime.Configured("fslocal", func(ctx *runtime.Context, cfg Config) error {
	f, err := Open(cfg)
	if err != nil {
		return err
	}
	if err := f.SweepRoots(context.Background()); err != nil {
		ctx.Logger().Warn("the start sweep of staging directories failed", "error", err)
	}
	if _, err := ctx.Effect(func() (func() error, error) { return f.Close, nil }); err != nil {
		f.Close()
		return err
	}
	return fs.Service.Provide(ctx, f)
})
