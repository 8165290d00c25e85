//go:build !unix

package confine

// openResolver resolves by names through the root's os.Root.
func openResolver(r *Root) (resolver, error) { return pathResolver{&r.tree, looker{r.dir}}, nil }
