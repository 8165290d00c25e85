// Package toolsearch contributes the model-facing discovery tools, glob
// (files by path pattern) and grep (file contents by regular expression),
// and their prompt guidance. It searches natively through the fs provider
// seam, walking with fs.Walk, so the provider's confinement and path
// display apply; what the model sees reproduces ripgrep's selection, order
// and texts as docs/tools.md describes.
package toolsearch

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// Config holds the result caps and the call deadline. Every key is
// optional and must be a positive integer.
type Config struct {
	// GlobMaxResults is the number of paths glob shows inline.
	GlobMaxResults int `json:"globMaxResults,omitempty" jsonschema:"minimum=1,default=100"`
	// GrepMaxMatches is the number of matches grep shows inline.
	GrepMaxMatches int `json:"grepMaxMatches,omitempty" jsonschema:"minimum=1,default=250"`
	// GrepMaxLineBytes is the UTF-8 bytes of a matched line shown inline.
	GrepMaxLineBytes int `json:"grepMaxLineBytes,omitempty" jsonschema:"minimum=1,default=2000"`
	// RawOutputMaxBytes caps the bytes a search produces before it fails.
	RawOutputMaxBytes int64 `json:"rawOutputMaxBytes,omitempty" jsonschema:"minimum=1,default=20000000"`
	// TimeoutMs is the deadline of one call, in milliseconds.
	TimeoutMs int64 `json:"timeoutMs,omitempty" jsonschema:"minimum=1,default=30000"`
}

// timeout is TimeoutMs as a duration; a count too large for one means no
// practical deadline.
func (c Config) timeout() time.Duration {
	return time.Duration(min(c.TimeoutMs, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
}

// Plugin registers glob and grep, with their prompt sections, once the fs
// provider, the tool registry and the prompt service exist.
var Plugin = runtime.Configured("toolsearch", apply, runtime.Inject(registry.Tools, fs.Service, registry.Prompts))

// The model-facing guidance, one prompt section per tool.
const (
	globGuidance = "Use the glob tool — not shell find — to discover files by path pattern. A pattern with no \"/\" matches basenames at any depth, so \"*\" matches every file in the tree rather than its top level. Results are files only, never directories, and include hidden and ignored files: a result that fits comes back in modification-time order, while a larger one is sampled across top-level entries, so it spans the tree instead of one subtree."
	grepGuidance = "Use the grep tool — not shell grep or rg — to search file contents. Use read on a matched file when you need surrounding context."
)

const (
	globDescription = "Find files whose paths match a glob pattern. Returns matching file paths — never directories — including hidden and ignored files (VCS metadata directories are excluded). Up to %[1]d paths come back in modification-time order; a larger result instead returns %[1]d paths sampled across top-level entries, says so, and reports where the complete sorted list was saved. This tool does not enumerate directory entries."
	grepDescription = "Search file contents with a ripgrep regular expression. Returns matching lines with line numbers, grouped by file. Returns the first %d matches inline; a capped result reports where the complete match list was saved. Use read on a matched file for surrounding context."
)

func apply(ctx *runtime.Context, cfg Config) error {
	defs, err := (&toolset{rt: ctx, cfg: cfg}).definitions()
	if err != nil {
		return err
	}
	return registry.Contribute(ctx, defs, []registry.Section{
		{Name: "tool:glob", Order: 103, Text: globGuidance},
		{Name: "tool:grep", Order: 104, Text: grepGuidance},
	})
}

// definitions builds the two tools, in the order the model sees them. Both
// only read, so calls may run in parallel with other reads.
func (t *toolset) definitions() ([]registry.Tool, error) {
	glob, err := registry.Define("glob", fmt.Sprintf(globDescription, t.cfg.GlobMaxResults), t.glob, renderGlob(t.cfg.GlobMaxResults))
	if err != nil {
		return nil, err
	}
	grep, err := registry.Define("grep", fmt.Sprintf(grepDescription, t.cfg.GrepMaxMatches), t.grep,
		renderGrep(t.cfg.GrepMaxMatches, t.cfg.GrepMaxLineBytes))
	if err != nil {
		return nil, err
	}
	parallel := func(json.RawMessage) bool { return true }
	for _, d := range []*registry.Tool{&glob, &grep} {
		d.ConcurrencySafe = parallel
		d.Traits = registry.Traits{ReadOnly: true, Paths: []string{"path"}}
	}
	return []registry.Tool{glob, grep}, nil
}
