package fs

import "context"

// NameLister is an optional capability for a listing that needs only the
// children's names and types, as the list tool does: a directory of a
// million entries then costs no Target, Version or time per child.
// ListNames calls fn for each child of the directory at t, named and typed
// as ListDir names and types it, in any order, and fails as ListDir fails;
// an error from fn stops it and is returned as is.
//
// It also returns a Version of the directory that changes whenever a child
// is added, removed or renamed, so that a consumer may keep the listing
// while Stat reports that version; or "" when the provider cannot promise
// it for this listing (the directory changed while it was read, or so
// recently that a change made now might not move its clock).
type NameLister interface {
	ListNames(ctx context.Context, t Target, fn func(name string, typ Type) error) (Version, error)
}

// ListNames lists the directory at t with fsys's NameLister when it has
// one, and otherwise through ListDir, whose listing it never vouches for:
// the Version is then "".
func ListNames(ctx context.Context, fsys FileSystem, t Target, fn func(name string, typ Type) error) (Version, error) {
	if l, ok := fsys.(NameLister); ok {
		return l.ListNames(ctx, t, fn)
	}
	children, err := fsys.ListDir(ctx, t)
	if err != nil {
		return "", err
	}
	for _, c := range children {
		if err := fn(c.Name, c.Type); err != nil {
			return "", err
		}
	}
	return "", nil
}
