// Package rootflag declares the --root and --read-only-root flags of the
// commands (demo, mcp), so that both read a relative DIR by one rule, the
// library's: it is passed on unchanged and resolves against the workspace
// (see gordis.Options.Roots), never against the process's directory.
package rootflag

import (
	"flag"

	"github.com/gordis-run/gordis/plugins/fslocal"
)

// Declare adds the repeatable flags --root DIR (read-write) and
// --read-only-root DIR to fl; each one given appends its root to roots, in
// the order of the command line.
func Declare(fl *flag.FlagSet, roots *[]fslocal.Root) {
	add := func(readOnly bool) func(string) error {
		return func(dir string) error {
			*roots = append(*roots, fslocal.Root{Path: dir, ReadOnly: readOnly})
			return nil
		}
	}
	fl.Func("root", "let the tools also read and change files under `DIR` (repeatable; a\nrelative DIR resolves against the workspace)", add(false))
	fl.Func("read-only-root", "let the tools also list and read, but not change, files under `DIR`\n(repeatable; a relative DIR resolves against the workspace)", add(true))
}
