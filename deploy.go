package gordis

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/fslocal"
	"github.com/gordis-run/gordis/plugins/fspolicy"
	"github.com/gordis-run/gordis/plugins/toolfs"
	"github.com/gordis-run/gordis/plugins/toolsearch"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// Options configures the default deployment. The zero value is the shipped
// stack rooted at the process working directory.
type Options struct {
	// Workspace is the directory relative paths resolve against (the fslocal
	// cwd) and, unless Unconfined, the tree the tools are confined to. ""
	// means the process working directory; a relative one is made absolute
	// against it.
	Workspace string
	// Unconfined lets the tools reach paths outside the workspace (absolute
	// paths, "..", symlinks that leave it). By default they cannot: a path
	// outside Workspace and Roots is refused with FS_SANDBOX_DENIED.
	Unconfined bool
	// Roots are directories the tools may reach besides the workspace, each
	// read-write or read-only; a relative one resolves against Workspace.
	Roots []fslocal.Root
	// NoPolicy leaves fspolicy out: writes and edits run unconditionally
	// against the bare provider, with no read-before-write.
	NoPolicy bool
	// Tools configures the list/read/write/edit tools.
	Tools toolfs.Config
	// Search configures the glob/grep tools.
	Search toolsearch.Config
	// Registry configures the tool registry.
	Registry registry.Config
	// Logger is the runtime's logger; nil means slog.Default().
	Logger *slog.Logger
	// Config names a deployment file (docs/loader.md): the plugins are its
	// entries instead of the stack above, and Deployment.Loader keeps them
	// in step with it. Workspace, Unconfined and Roots still apply and win
	// over the file, on every reload: they set the cwd, unconfined and roots
	// of each fslocal entry. NoPolicy, Tools, Search and Registry have no
	// meaning then: the file says all that.
	Config string
	// Catalog is where the file's plugin names are found; nil means
	// Catalog().
	Catalog *loader.Catalog
}

// Deployment is a running default deployment.
type Deployment struct {
	// Root is the runtime root: plug more plugins here (they see the "fs",
	// "tools" and "prompt" services). The cleanup returned by Build closes it.
	Root *runtime.Context
	// Tools is the tool registry ("tools" service).
	Tools *registry.Registry
	// Prompt assembles the system prompt ("prompt" service).
	Prompt *registry.Prompt
	// Workspace is the absolute directory relative paths resolve against:
	// the cwd to give agent sessions. From a file, it is the cwd of the
	// "fs" service the root sees, as Build found it.
	//
	// Tools, Prompt and Workspace do not change after Build: a reload
	// that replaces the registry entry (another name, group or isolation)
	// leaves them naming the disposed one. A config change of that entry
	// is taken in place.
	Workspace string
	// Loader reloads Options.Config (Reload, Watch); nil without a file.
	Loader *loader.Loader
}

// Build starts a deployment: from opts.Config when it names a file, else
// the default stack (see buildStack). The cleanup closes the root,
// disposing every plugin in reverse order. On error nothing is left
// running.
func Build(opts Options) (*Deployment, func(), error) {
	if opts.Config == "" {
		return buildStack(opts)
	}
	return buildFile(opts)
}

// buildFile starts the deployment that opts.Config describes, with the
// host's settings laid over every fslocal entry.
func buildFile(opts Options) (*Deployment, func(), error) {
	if opts.NoPolicy || opts.Tools != (toolfs.Config{}) || opts.Search != (toolsearch.Config{}) || opts.Registry != (registry.Config{}) {
		return nil, nil, errors.New("gordis: with a config file, the policy and the configs of registry, toolfs and toolsearch are set in the file (disable the fspolicy entry for no policy)")
	}
	var dir workspace
	if opts.Workspace != "" {
		var err error
		if dir, err = provideWorkspace(opts); err != nil {
			return nil, nil, err
		}
	}
	var roots []any
	for _, r := range opts.Roots {
		roots = append(roots, map[string]any{"path": r.Path, "readOnly": r.ReadOnly})
	}
	override := func(_, name string, config map[string]any) error {
		if name != fslocal.Plugin.Name() {
			return nil
		}
		if dir != "" {
			config["cwd"] = string(dir)
		}
		if opts.Unconfined {
			config["unconfined"] = true
		}
		if roots != nil {
			config["roots"] = roots
		}
		return nil
	}
	cat := opts.Catalog
	if cat == nil {
		cat = Catalog()
	}
	root, closeRoot := provideRoot(opts)
	l, err := loader.Open(root, opts.Config, cat, loader.WithOverride(override))
	if err != nil {
		closeRoot()
		return nil, nil, err
	}
	d, err := newDeployment(root, dir)
	if err != nil {
		closeRoot()
		return nil, nil, fmt.Errorf("gordis: %s: a deployment needs the \"tools\" and \"prompt\" services, which a registry entry provides (%w)", opts.Config, err)
	}
	d.Loader = l
	// Closing the root disposes the entries after the plugins that use
	// them; the loader then only stops watching.
	return d, func() {
		closeRoot()
		if err := l.Close(); err != nil {
			root.Logger().Error("gordis: closing the loader", "err", err)
		}
	}, nil
}

// Each plugged plugin is a distinct type, so Wire can tell them apart and the
// providers below can require their predecessor: the graph then forces the
// order root, registry, fslocal, fspolicy, toolfs, toolsearch.
type (
	registryFiber struct{ *runtime.Fiber }
	fsFiber       struct{ *runtime.Fiber }
	// policyFiber holds nil under Options.NoPolicy.
	policyFiber struct{ *runtime.Fiber }
	toolsFiber  struct{ *runtime.Fiber }
	searchFiber struct{ *runtime.Fiber }
)

// workspace is Options.Workspace made absolute.
type workspace string

func provideWorkspace(opts Options) (workspace, error) {
	dir, err := filepath.Abs(opts.Workspace) // Abs("") is the process cwd
	if err != nil {
		return "", fmt.Errorf("gordis: workspace: %w", err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("gordis: workspace: %w", err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("gordis: workspace %q is not a directory", dir)
	}
	return workspace(dir), nil
}

// provideRoot opens the runtime root; its cleanup closes it, which disposes
// every plugin in reverse order and drains the observers.
func provideRoot(opts Options) (*runtime.Context, func()) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	root := runtime.New(runtime.WithLogger(logger))
	return root, func() {
		if err := root.Close(); err != nil {
			logger.Error("gordis: closing the runtime", "err", err)
		}
	}
}

// plug applies p on root and waits until it has settled. A plugin that is
// still pending is missing a service its predecessors should have provided.
func plug(root *runtime.Context, p runtime.Plugin, config any) (*runtime.Fiber, error) {
	f, err := root.Plugin(p, config)
	if err == nil {
		err = f.Wait()
	}
	if err == nil && f.State() != runtime.Active {
		err = fmt.Errorf("%s, not active", f.State())
	}
	if err != nil {
		return nil, fmt.Errorf("gordis: plugin %s: %w", p.Name(), err)
	}
	return f, nil
}

func plugRegistry(root *runtime.Context, opts Options) (registryFiber, error) {
	f, err := plug(root, registry.Plugin, opts.Registry)
	return registryFiber{f}, err
}

func plugFS(root *runtime.Context, _ registryFiber, dir workspace, opts Options) (fsFiber, error) {
	f, err := plug(root, fslocal.Plugin, fslocal.Config{Cwd: string(dir), Unconfined: opts.Unconfined, Roots: opts.Roots})
	return fsFiber{f}, err
}

func plugPolicy(root *runtime.Context, _ fsFiber, opts Options) (policyFiber, error) {
	if opts.NoPolicy {
		return policyFiber{}, nil
	}
	f, err := plug(root, fspolicy.Plugin, nil)
	return policyFiber{f}, err
}

func plugTools(root *runtime.Context, _ policyFiber, opts Options) (toolsFiber, error) {
	f, err := plug(root, toolfs.Plugin, opts.Tools)
	return toolsFiber{f}, err
}

func plugSearch(root *runtime.Context, _ toolsFiber, opts Options) (searchFiber, error) {
	f, err := plug(root, toolsearch.Plugin, opts.Search)
	return searchFiber{f}, err
}

// stackDeployment is the default stack's Deployment, once toolsearch is
// plugged. (dir comes first so that the injector checks the workspace
// before it starts the runtime.)
func stackDeployment(dir workspace, root *runtime.Context, _ searchFiber) (*Deployment, error) {
	return newDeployment(root, dir)
}

// newDeployment fetches the services through a small host plugin that
// injects them, the way any plugin would. Without dir, the workspace is the
// cwd of the "fs" service, or the process's.
func newDeployment(root *runtime.Context, dir workspace) (*Deployment, error) {
	d := &Deployment{Root: root, Workspace: string(dir)}
	built := false
	host := runtime.Func("gordis", func(ctx *runtime.Context) (err error) {
		if built {
			// Applied again after a provider restarted (a reloaded file
			// replaced the registry): the Deployment stays as Build
			// returned it, for its readers.
			return nil
		}
		defer func() { built = err == nil }()
		if d.Tools, err = registry.Tools.Get(ctx); err != nil {
			return err
		}
		if d.Prompt, err = registry.Prompts.Get(ctx); err != nil {
			return err
		}
		if d.Workspace == "" {
			d.Workspace, err = serviceCwd(ctx)
		}
		return err
	}, runtime.Inject(registry.Tools, registry.Prompts))
	if _, err := plug(root, host, nil); err != nil {
		return nil, err
	}
	return d, nil
}

// serviceCwd is the cwd of the "fs" service ctx sees when it has one, else
// the process's.
func serviceCwd(ctx *runtime.Context) (string, error) {
	if f, ok := fs.Service.Lookup(ctx); ok {
		if c, ok := f.(interface{ Cwd() string }); ok && c.Cwd() != "" {
			return c.Cwd(), nil
		}
	}
	return os.Getwd()
}
