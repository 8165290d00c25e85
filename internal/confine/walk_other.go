//go:build !unix

package confine

// openWalker walks by names through the root's os.Root.
func openWalker(r *Root) (walker, error) { return pathWalker{r}, nil }
