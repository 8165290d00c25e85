package loader

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"

	"go.yaml.in/yaml/v4"

	"github.com/gordis-run/gordis/internal/yamlpatch"
	"github.com/gordis-run/gordis/runtime"
)

// change is one difference between two configs: the value at path is set,
// or removed.
type change struct {
	path  []string
	value any
	del   bool
}

// updated writes back a config that an entry's plugin gave itself.
func (l *Loader) updated(c runtime.ConfigChange) error {
	id, changes, cfg, err := l.take(c)
	if err == nil && id != "" {
		err = l.writeBack(id, func(src []byte, at yamlpatch.Path) ([]byte, error) {
			return setConfig(src, at, changes, cfg)
		})
	}
	l.failedWrite(err)
	return nil
}

// failedWrite logs a write-back that could not be made: the runtime drops
// a listener's error, and the user should learn why the next reload
// undoes the change (the file's config again, a disposed entry plugged
// again).
func (l *Loader) failedWrite(err error) {
	if err != nil {
		l.log.Error("config not written back to the file", "file", l.file, "error", err)
	}
}

// take records a config change of an entry's fiber that the loader did not
// make, and returns the entry's id (or "" for another change), what
// changed, and the config as the file will now give it. The entry holds
// that config from now on, so that the reload the write causes finds
// nothing to do.
func (l *Loader) take(c runtime.ConfigChange) (id string, changes []change, cfg any, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.byFiber[c.Fiber]
	if e == nil || e.gone || e.ours > 0 || l.closed {
		return "", nil, nil, nil
	}
	from, err := jsonValue(c.From)
	if err != nil {
		return "", nil, nil, err
	}
	to, err := jsonValue(c.To)
	if err != nil {
		return "", nil, nil, err
	}
	if changes = diff(nil, from, to, nil); len(changes) == 0 {
		return "", nil, nil, nil
	}
	s := *e.spec
	for _, ch := range changes {
		s.config = patch(s.config, ch.path, ch.value, ch.del)
	}
	if s.raw, err = json.Marshal(s.config); err != nil {
		return "", nil, nil, err
	}
	e.spec = &s
	return s.id, changes, s.config, nil
}

// setConfig writes changes into the config of the entry at path. A change
// below a key the file lacks sets the nearest key it has, from cfg (the
// config as the file will now give it).
func setConfig(src []byte, at yamlpatch.Path, changes []change, cfg any) ([]byte, error) {
	base := append(slices.Clip(at), "config")
	for _, ch := range changes {
		path := append(slices.Clip(base), anys(ch.path)...)
		var (
			out []byte
			err error
		)
		if ch.del {
			if out, err = yamlpatch.Delete(src, path); errors.Is(err, yamlpatch.ErrNotFound) {
				continue // not in the file: a default the plugin dropped
			}
		} else {
			for n := len(ch.path); n >= 0; n-- {
				out, err = yamlpatch.Set(src, append(slices.Clip(base), anys(ch.path[:n])...), valueAt(cfg, ch.path[:n]))
				if !errors.Is(err, yamlpatch.ErrNotFound) {
					break
				}
			}
		}
		if err != nil {
			return nil, err
		}
		src = out
	}
	return src, nil
}

// status writes back an entry whose plugin disposed itself as disabled.
// A fiber disposed because its group (or the loader) is going away is not
// one: its parent is no longer active.
func (l *Loader) status(c runtime.StatusChange) error {
	if c.To != runtime.Disposed {
		return nil
	}
	l.mu.Lock()
	e := l.byFiber[c.Fiber]
	if e == nil || e.gone || l.closed || c.Fiber.Parent().Fiber().State() != runtime.Active {
		l.mu.Unlock()
		return nil
	}
	for _, d := range l.byID {
		for a := d; a != nil; a = a.parent {
			if a == e {
				d.gone = true
				delete(l.byID, d.spec.id)
				delete(l.byFiber, d.fiber)
				break
			}
		}
	}
	id := e.spec.id
	l.mu.Unlock()
	l.failedWrite(l.writeBack(id, func(src []byte, at yamlpatch.Path) ([]byte, error) {
		return yamlpatch.Set(src, append(slices.Clip(at), "disabled"), true)
	}))
	return nil
}

// writeBack edits the entry id where the file has it now, which may be
// elsewhere than at the last load, and writes the file atomically.
func (l *Loader) writeBack(id string, edit func(src []byte, at yamlpatch.Path) ([]byte, error)) error {
	l.fileMu.Lock()
	defer l.fileMu.Unlock()
	for range writeAttempts {
		src, err := os.ReadFile(l.file)
		if err != nil {
			return err
		}
		at := find(src, id)
		if at == nil {
			return fmt.Errorf("loader: entry %q is no longer in %s: not written back", id, l.file)
		}
		out, err := edit(src, at)
		if err != nil {
			return fmt.Errorf("loader: writing entry %q back to %s: %w", id, l.file, err)
		}
		if written, err := l.write(src, out); written || err != nil {
			return err
		}
	}
	return fmt.Errorf("loader: %s changed under each of %d attempts to write entry %q back", l.file, writeAttempts, id)
}

// writeAttempts bounds the edits of a file that keeps changing under them.
const writeAttempts = 5

// write replaces the file atomically with data, if it still holds src:
// written is false when someone else wrote it since it was read, so that
// their edit is not lost.
func (l *Loader) write(src, data []byte) (written bool, err error) {
	err = yamlpatch.ReplaceFile(l.file, src, data)
	if errors.Is(err, yamlpatch.ErrChanged) {
		return false, nil
	}
	return err == nil, err
}

// writeIDs writes the ids generated at load into the file, first in their
// entries, if the file is still the one that was loaded.
func (l *Loader) writeIDs(t *tree) error {
	var gen []*spec
	t.all(func(s *spec) {
		if s.generated {
			gen = append(gen, s)
		}
	})
	if len(gen) == 0 {
		return nil
	}
	l.fileMu.Lock()
	defer l.fileMu.Unlock()
	out := t.src
	for _, s := range gen {
		var err error
		if out, err = yamlpatch.Insert(out, append(yamlpatch.Path(slices.Clip(s.path)), "id"), s.id); err != nil {
			return err
		}
	}
	_, err := l.write(t.src, out) // changed since: the next load generates them again
	return err
}

// find returns the path of the entry id in the file src, or nil.
func find(src []byte, id string) yamlpatch.Path {
	var doc yaml.Node
	if yaml.Unmarshal(src, &doc) != nil || doc.Kind == 0 {
		return nil
	}
	var search func(n *yaml.Node, at yamlpatch.Path) yamlpatch.Path
	search = func(n *yaml.Node, at yamlpatch.Path) yamlpatch.Path {
		if n == nil || n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, item := range n.Content {
			if item.Kind != yaml.MappingNode {
				continue
			}
			here := append(slices.Clip(at), i)
			var name string
			var config *yaml.Node
			for k := 0; k+1 < len(item.Content); k += 2 {
				switch item.Content[k].Value {
				case "id":
					if item.Content[k+1].Value == id {
						return here
					}
				case "name":
					name = item.Content[k+1].Value
				case "config":
					config = item.Content[k+1]
				}
			}
			if name == Group {
				if p := search(config, append(here, "config")); p != nil {
					return p
				}
			}
		}
		return nil
	}
	return search(doc.Content[0], nil)
}

// diff lists what differs between two configs as JSON values, object by
// object, so that the file keeps every value that did not change, its
// ${VAR} references included.
func diff(path []string, a, b any, out []change) []change {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if !reflect.DeepEqual(a, b) {
			out = append(out, change{path: path, value: b})
		}
		return out
	}
	for _, k := range slices.Sorted(maps.Keys(bm)) {
		p := append(slices.Clip(path), k)
		if av, ok := am[k]; ok {
			out = diff(p, av, bm[k], out)
		} else {
			out = append(out, change{path: p, value: bm[k]})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(am)) {
		if _, ok := bm[k]; !ok {
			out = append(out, change{path: append(slices.Clip(path), k), del: true})
		}
	}
	return out
}

// patch returns v with the value at path set (or removed), making the
// objects on the way; v's own maps are copied, not modified.
func patch(v any, path []string, value any, del bool) any {
	if len(path) == 0 {
		return value
	}
	m, _ := v.(map[string]any)
	c := make(map[string]any, len(m)+1)
	maps.Copy(c, m)
	if del && len(path) == 1 {
		delete(c, path[0])
		return c
	}
	c[path[0]] = patch(c[path[0]], path[1:], value, del)
	return c
}

func valueAt(v any, path []string) any {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func anys(path []string) []any {
	out := make([]any, len(path))
	for i, k := range path {
		out[i] = k
	}
	return out
}

// jsonValue turns a config into JSON values (maps, slices, strings,
// bools, nil, and numbers as int64 when whole, else float64), which is
// how a YAML encoder writes them as the file would.
func jsonValue(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var out any
	if err := d.Decode(&out); err != nil {
		return nil, err
	}
	return numbers(out), nil
}

func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case map[string]any:
		for k, x := range v {
			v[k] = numbers(x)
		}
	case []any:
		for i, x := range v {
			v[i] = numbers(x)
		}
	}
	return v
}
