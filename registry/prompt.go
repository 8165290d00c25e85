package registry

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gordis-run/gordis/runtime"
)

// Section is a named, ordered part of the system prompt.
type Section struct {
	Name  string
	Order int
	Text  string
}

// Prompt is the "prompt" service. It is safe for concurrent use.
type Prompt struct {
	mu       sync.RWMutex
	sections map[string]*Section
}

// NewPrompt returns an empty prompt service.
func NewPrompt() *Prompt {
	return &Prompt{sections: map[string]*Section{}}
}

// Add contributes s, owned by ctx's fiber.
func (p *Prompt) Add(ctx *runtime.Context, s Section) error {
	if s.Name == "" {
		return errors.New("registry: prompt section without a name")
	}
	owned := &s
	_, err := ctx.Effect(func() (func() error, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if _, dup := p.sections[s.Name]; dup {
			return nil, fmt.Errorf("registry: prompt section %q is already added", s.Name)
		}
		p.sections[s.Name] = owned
		return func() error {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.sections[s.Name] == owned {
				delete(p.sections, s.Name)
			}
			return nil
		}, nil
	})
	return err
}

// Sections returns the sections by order, then name.
func (p *Prompt) Sections() []Section {
	p.mu.RLock()
	out := make([]Section, 0, len(p.sections))
	for _, s := range p.sections {
		out = append(out, *s)
	}
	p.mu.RUnlock()
	slices.SortFunc(out, func(a, b Section) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), strings.Compare(a.Name, b.Name))
	})
	return out
}

// Assemble joins the sections by order (then name) into the system prompt,
// separated by a blank line. Sections with empty text are left out.
func (p *Prompt) Assemble() string {
	var texts []string
	for _, s := range p.Sections() {
		if s.Text != "" {
			texts = append(texts, s.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// Contribute registers tools and adds their prompt sections, in order, all
// owned by ctx's fiber, through the "tools" and "prompt" services ctx
// injects: what a plugin of model-facing tools does in its apply.
func Contribute(ctx *runtime.Context, tools []Tool, sections []Section) error {
	reg, err := Tools.Get(ctx)
	if err != nil {
		return err
	}
	prompts, err := Prompts.Get(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if err := reg.Register(ctx, t); err != nil {
			return err
		}
	}
	for _, s := range sections {
		if err := prompts.Add(ctx, s); err != nil {
			return err
		}
	}
	return nil
}
