package fslocal

import (
	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/runtime"
)

// Config configures the plugin.
type Config struct {
	// Cwd is the directory relative paths resolve against when the caller
	// gives none; empty means the process working directory when the
	// plugin is applied. It does not confine anything.
	Cwd string `json:"cwd,omitempty"`
}

// Plugin provides New(Config.Cwd) as the "fs" service (fs.Service).
var Plugin = runtime.Configured("fslocal", func(ctx *runtime.Context, cfg Config) error {
	return fs.Service.Provide(ctx, New(cfg.Cwd))
})
