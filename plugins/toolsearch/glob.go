package toolsearch

import (
	"context"
	"slices"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/toolsearch/internal/ignore"
	"github.com/gordis-run/gordis/registry"
)

// globFile is one listed path with the modification time the sort uses.
type globFile struct {
	path  string
	mtime time.Time
	known bool // false when the metadata could not be read: sorted last
}

// glob lists the regular files below the root whose workspace-relative
// paths the pattern (one override glob, plus the VCS exclusions) admits,
// oldest first; ties keep the walk's order.
func (t *toolset) glob(ctx context.Context, call *registry.Call, args globArgs) (*GlobResult, error) {
	req, err := args.parse()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, t.cfg.timeout())
	defer cancel()
	over, err := ignore.NewOverride(append([]string{req.pattern}, ignore.VCSExcludes()...)...)
	if err != nil {
		return nil, patternRejected("glob", err)
	}
	s, err := t.resolve(ctx, call, "glob", req.path)
	if err != nil {
		return nil, err
	}
	var (
		files   []globFile
		raw     int64
		visited bool
	)
	err = fs.Walk(ctx, s.fsys, s.root, func(e fs.WalkEntry) error {
		visited = true
		sub := e.Path()
		switch typ := e.Type(); {
		case sub == "":
			// An explicit root is never filtered: a file is listed
			// whatever the pattern, a directory is only descended.
			if typ != fs.TypeFile {
				return nil
			}
		case typ == fs.TypeDirectory:
			if over.Match(s.match(sub), true) == ignore.Ignore {
				return fs.SkipDir
			}
			return nil
		case typ != fs.TypeFile || over.Match(s.match(sub), false) == ignore.Ignore:
			return nil
		}
		f := globFile{path: s.display(sub)}
		if raw += int64(len(f.path)) + 1; raw > t.cfg.RawOutputMaxBytes {
			return overflow("glob", raw, t.cfg.RawOutputMaxBytes)
		}
		if info, err := e.Info(); err == nil && !info.ModTime.IsZero() {
			f.mtime, f.known = info.ModTime, true
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, s.walkError(ctx, "glob", err, visited)
	}
	slices.SortStableFunc(files, func(a, b globFile) int {
		if a.known != b.known {
			if a.known {
				return -1
			}
			return 1
		}
		return a.mtime.Compare(b.mtime)
	})
	r := &GlobResult{Root: s.valueRoot(), Paths: make([]string, len(files))}
	for i, f := range files {
		r.Paths[i] = f.path
	}
	return r, nil
}
