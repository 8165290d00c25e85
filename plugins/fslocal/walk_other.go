//go:build !unix

package fslocal

// openWalker walks by names through the root's os.Root.
func openWalker(r *root) (walker, error) { return pathWalker{r}, nil }
