//go:build wireinject

package gordis

import "github.com/google/wire"

// buildStack starts the default deployment: the runtime root, the registry (the
// "tools" and "prompt" services), fslocal (the "fs" service, confined to
// the workspace and opts.Roots unless opts.Unconfined), fspolicy unless
// opts.NoPolicy, toolfs (list, read, write, edit) and toolsearch (glob,
// grep). The cleanup closes the root, disposing every plugin in reverse
// order. On error nothing is left running.
func buildStack(opts Options) (*Deployment, func(), error) {
	wire.Build(
		provideWorkspace,
		provideRoot,
		plugRegistry,
		plugFS,
		plugPolicy,
		plugTools,
		plugSearch,
		stackDeployment,
	)
	return nil, nil, nil
}
