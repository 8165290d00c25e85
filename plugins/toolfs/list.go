package toolfs

import (
	"context"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/registry"
)

// list is one ListDir: no stat, and no observation (a listing reads no
// content, so it must not satisfy the read-before-write policy).
func (t *toolset) list(ctx context.Context, call *registry.Call, args listArgs) (*ListResult, error) {
	req, err := args.parse()
	if err != nil {
		return nil, err
	}
	fsys, target, err := t.resolve(ctx, call, req.path)
	if err != nil {
		return nil, err
	}
	children, err := fsys.ListDir(ctx, target)
	if err != nil {
		return nil, err
	}
	return listPage(target.Path, children, req.offset, t.cfg.ListMaxEntries)
}

// listPage orders the children and cuts the requested page.
func listPage(path string, children []fs.DirEntry, offset, pageSize int) (*ListResult, error) {
	entries := make([]ListEntry, len(children))
	r := &ListResult{Path: path, Offset: offset, TotalEntries: len(children)}
	for i, c := range children {
		entries[i] = ListEntry{Name: c.Name, Type: entryType(c.Type)}
		switch entries[i].Type {
		case fs.TypeDirectory:
			r.Counts.Directories++
		case fs.TypeFile:
			r.Counts.Files++
		default:
			r.Counts.Other++
		}
	}
	if offset > len(entries) && !(offset == 1 && len(entries) == 0) {
		return nil, fs.Errorf(fs.CodeNotFound, "offset %d is out of range for %s (%d entries)", offset, quoted(path), len(entries))
	}
	orderEntries(entries)
	r.Entries = entries[offset-1 : min(offset-1+pageSize, len(entries))]
	return r, nil
}
