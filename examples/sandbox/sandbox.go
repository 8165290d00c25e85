// Package sandbox is an example third-party plugin written only against the
// public API: a permission rule on the tools/pre-execute waterfall that
// confines the write and edit tools to one folder. A denied call never runs;
// the model sees the reason as the call's error.
//
// Paths are compared by the fs provider's identity keys, which fslocal
// derives from real paths, so a symlink inside the folder that points out of
// it does not escape. The check runs before the tool does: a link swapped in
// between the two is out of its reach (a confining provider would close that
// gap).
package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/toolfs"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// Config names the writable folder.
type Config struct {
	// Root is the folder writes and edits must stay in. A relative root
	// resolves against the fs provider's working directory.
	Root string `json:"root" jsonschema:"minLength=1"`
}

// Plugin installs the rule, and a prompt section that states it, once the
// fs provider and the prompt service exist.
var Plugin = runtime.Configured("sandbox", apply, runtime.Inject(fs.Service.Name(), registry.Prompts.Name()))

// guarded are the tools whose file_path the rule checks.
var guarded = map[string]bool{"write": true, "edit": true}

type rule struct {
	files fs.FileSystem
	root  fs.Target
}

func apply(ctx *runtime.Context, cfg Config) error {
	files, err := fs.Service.Get(ctx)
	if err != nil {
		return err
	}
	prompts, err := registry.Prompts.Get(ctx)
	if err != nil {
		return err
	}
	bg := context.Background()
	root, err := files.Resolve(bg, cfg.Root, "")
	if err != nil {
		return err
	}
	info, err := files.Stat(bg, root)
	if err != nil {
		return err
	}
	if info == nil || info.Type != fs.TypeDirectory {
		return fmt.Errorf(`sandbox: root "%s" is not a directory`, root.Path)
	}
	r := &rule{files: files, root: root}
	// Prepended, so that no earlier permission plugin can allow a call
	// before this rule has seen it.
	if _, err := registry.PreExecute.On(ctx, r.check, runtime.Prepend()); err != nil {
		return err
	}
	return prompts.Add(ctx, registry.Section{
		Name:  "sandbox",
		Order: 90,
		Text:  fmt.Sprintf("The write and edit tools may only change files inside %s; calls on other paths are refused.", root.Path),
	})
}

// check denies a write or edit whose file_path resolves outside the root.
// The registry has validated the arguments against the tool's schema; what
// cannot be resolved fails closed (the registry denies on a listener error).
func (r *rule) check(req *registry.Request, next runtime.Next[registry.Decision]) (registry.Decision, error) {
	call := req.Call
	if !guarded[call.Tool] {
		return next()
	}
	var args struct {
		FilePath string `json:"file_path"`
	}
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return registry.Decision{}, err
	}
	// Resolve exactly as the file tools will, or a ".." through a symlinked
	// workspace would be judged here as a different file than the one written.
	target, err := r.files.Resolve(context.Background(), args.FilePath, toolfs.SessionCwd(call, args.FilePath))
	if err != nil {
		return registry.Decision{}, err
	}
	if !within(r.root.Key, target.Key) {
		return registry.Decision{
			Deny:   true,
			Reason: fmt.Sprintf(`cannot %s "%s": outside the writable folder "%s"`, call.Tool, target.Path, r.root.Path),
		}, nil
	}
	return next()
}

// within reports whether key is root or below it.
func within(root, key string) bool {
	rel, err := filepath.Rel(root, key)
	return err == nil && filepath.IsLocal(rel)
}
