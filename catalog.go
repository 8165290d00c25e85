package gordis

import (
	"github.com/gordis-run/gordis/examples/auditlog"
	"github.com/gordis-run/gordis/examples/protect"
	"github.com/gordis-run/gordis/examples/wordcount"
	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/plugins/fslocal"
	"github.com/gordis-run/gordis/plugins/fspolicy"
	"github.com/gordis-run/gordis/plugins/toolfs"
	"github.com/gordis-run/gordis/plugins/toolsearch"
	"github.com/gordis-run/gordis/registry"
)

// Catalog returns a new catalogue of the plugins a deployment file can
// name out of the box: the default stack (registry, fslocal, fspolicy,
// toolfs, toolsearch) and the examples (auditlog, protect, wordcount). A
// host adds its own with Register. The MCP plugins are not in it, so that a
// program without MCP does not build the MCP SDK: cmd/mcp adds them.
func Catalog() *loader.Catalog {
	cat, err := loader.NewCatalog(
		registry.Plugin, fslocal.Plugin, fspolicy.Plugin, toolfs.Plugin, toolsearch.Plugin,
		auditlog.Plugin, protect.Plugin, wordcount.Plugin,
	)
	if err != nil {
		panic("gordis: the standard catalogue: " + err.Error()) // a fixed list of distinct names
	}
	return cat
}
