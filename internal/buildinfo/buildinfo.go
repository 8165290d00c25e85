// Package buildinfo reports the version of the gordis module in the running
// binary, for protocols that announce one (MCP's implementation info).
package buildinfo

import "runtime/debug"

const modulePath = "github.com/gordis-run/gordis"

// Version is the module version the build recorded: a tag or pseudo-version
// when gordis is a dependency or was built from a tagged checkout; for a
// build inside the repository without one, "devel+" and the first 12
// digits of the VCS revision, with ".dirty" when the tree had changes;
// "(devel)" when not even that was recorded (go run, go test), and
// "unknown" when the binary carries no build information.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return versionOf(info)
}

func versionOf(info *debug.BuildInfo) string {
	if info.Main.Path != modulePath {
		for _, dep := range info.Deps {
			if dep.Path == modulePath {
				return dep.Version
			}
		}
		return "unknown"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "(devel)"
	}
	v := "devel+" + rev[:min(12, len(rev))]
	if dirty {
		v += ".dirty"
	}
	return v
}
