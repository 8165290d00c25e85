package loader

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gordis-run/gordis/runtime"
)

// Group is the reserved entry name of a group: its config is a list of
// entries, plugged below the group's own fiber.
const Group = "group"

// ErrUnknownPlugin is wrapped by the error for a name the catalogue lacks.
var ErrUnknownPlugin = errors.New("unknown plugin")

// Catalog maps the names a file may use to plugins. The host fills it
// explicitly, as database/sql drivers are registered, but without init():
// two programs in one test binary keep separate catalogues. It is safe for
// concurrent use.
type Catalog struct {
	mu      sync.RWMutex
	plugins map[string]runtime.Plugin
}

// NewCatalog returns a catalogue of plugins, refusing a nil plugin, one
// without a name, one named "group", and two plugins with one name.
func NewCatalog(plugins ...runtime.Plugin) (*Catalog, error) {
	c := &Catalog{plugins: make(map[string]runtime.Plugin, len(plugins))}
	for _, p := range plugins {
		if err := c.Register(p); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Register adds p under its name, with the checks of NewCatalog.
func (c *Catalog) Register(p runtime.Plugin) error {
	if p == nil {
		return errors.New("loader: nil plugin")
	}
	name := p.Name()
	switch name {
	case "":
		return fmt.Errorf("loader: plugin %T has no name", p)
	case Group:
		return fmt.Errorf("loader: %q is reserved for groups", Group)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.plugins[name]; dup {
		return fmt.Errorf("loader: two plugins named %q", name)
	}
	c.plugins[name] = p
	return nil
}

// Lookup returns the plugin named name, or an error wrapping
// ErrUnknownPlugin that suggests the closest known names.
func (c *Catalog) Lookup(name string) (runtime.Plugin, error) {
	c.mu.RLock()
	p, ok := c.plugins[name]
	c.mu.RUnlock()
	if ok {
		return p, nil
	}
	return nil, c.unknown(name)
}

// Names returns the known names, sorted.
func (c *Catalog) Names() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	names := make([]string, 0, len(c.plugins))
	for name := range c.plugins {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// unknown words the error for name: the known names within a few edits,
// or every known name when none is that close.
func (c *Catalog) unknown(name string) error {
	names := append(c.Names(), Group)
	slices.Sort(names)
	if hint := didYouMean(name, names); hint != "" {
		return fmt.Errorf("%w %q%s", ErrUnknownPlugin, name, hint)
	}
	return fmt.Errorf("%w %q (known: %s)", ErrUnknownPlugin, name, strings.Join(quoted(names), ", "))
}
