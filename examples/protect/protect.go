// Package protect is an example third-party plugin written only against the
// public API: a permission rule on the tools/pre-execute waterfall that
// refuses calls that would change protected files (.env, lock files, a .git
// directory), whichever tool would change them. A denied call never runs;
// the model sees the reason as the call's error.
//
// The rule knows no tool by name. Each tool declares its Traits: whether
// its calls change anything (ReadOnly) and which arguments are paths
// (Paths). So read and list pass untouched, write and edit are checked, and
// a tool added later is covered as soon as it declares its traits. A
// mutating tool that declares no path arguments and does not claim to
// change no files (Traits.NoFiles) is refused: the rule cannot tell what it
// touches. Tools imported over MCP are such tools until their path
// arguments are declared (plugins/mcpclient's Config.Paths);
// Config.AllowUnknownPaths lets them through instead.
//
// It is a policy for a cooperative model, not a security boundary. Keeping
// the tools inside the workspace is the provider's job (fslocal confines
// every open and rename to its roots through a directory handle); a check
// that runs before the tool cannot close the gap between the check and the
// write, where a symlink can be swapped in.
package protect

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/toolfs"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// Config names the protected files.
type Config struct {
	// Patterns use path.Match syntax on slash-separated paths relative to
	// the calling session's workspace. A pattern without a slash matches
	// any one element of the path: ".env" every .env file, "*.lock" every
	// lock file, ".git" everything inside a .git directory. A pattern with
	// a slash matches from the workspace down: "config/prod" is that
	// directory and everything in it.
	Patterns []string `json:"patterns" jsonschema:"minItems=1"`
	// AllowUnknownPaths lets through the calls of mutating tools that do
	// not say which files they change, which are refused by default.
	AllowUnknownPaths bool `json:"allowUnknownPaths,omitempty"`
}

// Plugin installs the rule, and a prompt section that states it, once the
// fs provider and the prompt service exist.
var Plugin = runtime.Configured("protect", apply, runtime.Inject(fs.Service, registry.Prompts))

type rule struct {
	files        fs.FileSystem
	patterns     []string
	allowUnknown bool // Config.AllowUnknownPaths
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
	r := &rule{files: files, allowUnknown: cfg.AllowUnknownPaths}
	for _, p := range cfg.Patterns {
		p = path.Clean(p)
		if _, err := path.Match(p, ""); err != nil || p == "." || path.IsAbs(p) {
			return fmt.Errorf("protect: pattern %q: want a relative path pattern", p)
		}
		r.patterns = append(r.patterns, p)
	}
	// Prepended, so that no earlier permission plugin can allow a call
	// before this rule has seen it.
	if _, err := registry.PreExecute.On(ctx, r.check, runtime.Prepend()); err != nil {
		return err
	}
	return prompts.Add(ctx, registry.Section{
		Name:  "protect",
		Order: 90,
		Text:  "These files are protected: " + strings.Join(r.patterns, ", ") + ". Calls that would change them are refused; leave them as they are.",
	})
}

// check denies a mutating call one of whose path arguments is protected,
// and, unless allowUnknown, one whose tool does not say what it changes.
// The path is resolved exactly as the file tools resolve it; what cannot be
// resolved fails closed (the registry denies on a listener error).
func (r *rule) check(req *registry.Request, next runtime.Next[registry.Decision]) (registry.Decision, error) {
	if req.Traits.ReadOnly {
		return next()
	}
	if len(req.Traits.Paths) == 0 && !req.Traits.NoFiles && !r.allowUnknown {
		return registry.Decision{
			Deny:   true,
			Reason: fmt.Sprintf("cannot %s: the tool does not say which files it changes, so it could change a protected file", req.Call.Tool),
		}, nil
	}
	ctx := req.Context()
	for _, p := range req.Paths() {
		cwd := toolfs.SessionCwd(req.Call, p)
		target, err := r.files.Resolve(ctx, p, cwd)
		if err != nil {
			return registry.Decision{}, err
		}
		workspace, err := r.files.Resolve(ctx, ".", cwd)
		if err != nil {
			return registry.Decision{}, err
		}
		// The display path as resolved, and the identity key, which for
		// fslocal is the real path: a symlink to a protected file is caught.
		pattern, ok := r.match(relative(workspace.Path, target.Path))
		if !ok {
			pattern, ok = r.match(relative(workspace.Key, target.Key))
		}
		if ok {
			return registry.Decision{
				Deny:   true,
				Reason: fmt.Sprintf(`cannot %s "%s": it is protected by the pattern "%s"`, req.Call.Tool, target.Path, pattern),
			}, nil
		}
	}
	return next()
}

// relative is p relative to dir, with slashes.
func relative(dir, p string) string {
	if rel, err := filepath.Rel(dir, p); err == nil {
		p = rel
	}
	return filepath.ToSlash(p)
}

// match returns the first pattern that matches rel.
func (r *rule) match(rel string) (string, bool) {
	elems := strings.Split(rel, "/")
	for _, pattern := range r.patterns {
		if !strings.Contains(pattern, "/") {
			for _, e := range elems {
				if ok, _ := path.Match(pattern, e); ok {
					return pattern, true
				}
			}
			continue
		}
		for i := range elems {
			if ok, _ := path.Match(pattern, strings.Join(elems[:i+1], "/")); ok {
				return pattern, true
			}
		}
	}
	return "", false
}
