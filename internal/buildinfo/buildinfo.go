// Package buildinfo reports the version of the gordis module in the running
// binary, for protocols that announce one (MCP's implementation info).
package buildinfo

import "runtime/debug"

const modulePath = "github.com/gordis-run/gordis"

// Version is the module version the build recorded: a tag or pseudo-version
// for a dependency, "(devel)" for a build inside the repository, "unknown"
// when the binary carries no build information.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if info.Main.Path == modulePath {
		return info.Main.Version
	}
	for _, dep := range info.Deps {
		if dep.Path == modulePath {
			return dep.Version
		}
	}
	return "unknown"
}
