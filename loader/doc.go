// Package loader composes a deployment from a config file and keeps it in
// step with the file while the process runs, as Cordis's loader does.
//
// The file is YAML (JSON is YAML too): a list of entries, each a plugin
// from a [Catalog] with its config, or a group of entries.
//
//	# gordis.yaml
//	- id: fs                 # unique in the file; generated and written back if absent
//	  name: fslocal          # a plugin of the catalogue
//	  config:
//	    cwd: ${HOME}/project # ${VAR} and ${VAR:-default} read the environment
//	- id: extra
//	  name: group            # its config is a list of entries
//	  isolate: {fs: true}    # a domain of its own for the fs service
//	  config:
//	    - {id: audit, name: auditlog, disabled: true}
//
// [Open] checks the whole file before it plugs anything: every error
// names the file, line, column and entry. [Loader.Reload] (and
// [Loader.Watch], on every save) applies the difference by id: a changed
// config updates its fiber in place, a new entry is plugged, a removed or
// disabled one is disposed, and the rest is not touched. A plugin that
// updates its own config or disposes itself is written back to the file,
// which keeps its comments and layout. [Schema] gives a JSON Schema of the
// file for editors.
package loader
