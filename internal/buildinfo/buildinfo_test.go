package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "4e05ba6c0ffee1234567890abcdef"}}
	dirty := append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	for _, c := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"tagged", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v0.3.0"}, Settings: rev}, "v0.3.0"},
		{"repository build", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}, Settings: rev}, "devel+4e05ba6c0ffe"},
		{"with changes", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}, Settings: dirty}, "devel+4e05ba6c0ffe.dirty"},
		{"no vcs", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}}, "(devel)"},
		{"dependency", debug.BuildInfo{Main: debug.Module{Path: "example.com/host"}, Deps: []*debug.Module{{Path: modulePath, Version: "v0.2.1"}}}, "v0.2.1"},
		{"absent", debug.BuildInfo{Main: debug.Module{Path: "example.com/host"}}, "unknown"},
	} {
		if got := versionOf(&c.info); got != c.want {
			t.Errorf("%s: versionOf = %q, want %q", c.name, got, c.want)
		}
	}
}
