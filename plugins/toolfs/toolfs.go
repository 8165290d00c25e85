// Package toolfs contributes the model-facing filesystem tools — list, read,
// write and edit — and their prompt guidance. It works only through the fs
// provider seam: the observation policy, if any, speaks through the fs/*
// intent events, and every successful read, write and edit is announced on
// fs.ObservedEvent.
package toolfs

import (
	"encoding/json"
	"fmt"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// Config holds the listing and read caps. Every key is optional and must be
// a positive integer.
type Config struct {
	// ListMaxEntries is the size of one list page.
	ListMaxEntries int `json:"listMaxEntries,omitempty" jsonschema:"minimum=1,default=200"`
	// ReadLimit is the default and the maximum number of lines of one read.
	ReadLimit int `json:"readLimit,omitempty" jsonschema:"minimum=1,default=2000"`
	// ReadMaxLineLength is the characters kept per line before truncation.
	ReadMaxLineLength int `json:"readMaxLineLength,omitempty" jsonschema:"minimum=1,default=2000"`
	// ReadMaxBytes caps the UTF-8 bytes of one read's selected lines.
	ReadMaxBytes int `json:"readMaxBytes,omitempty" jsonschema:"minimum=1,default=51200"`
	// ReadStreamMinSize is the file size from which reads stream instead of
	// loading the whole file.
	ReadStreamMinSize int64 `json:"readStreamMinSize,omitempty" jsonschema:"minimum=1,default=10485760"`
}

// Plugin registers list, read, write and edit, with their prompt sections,
// once the fs provider, the tool registry and the prompt service exist.
var Plugin = runtime.Configured("toolfs", apply, runtime.Inject(registry.Tools, fs.Service, registry.Prompts))

// The model-facing guidance, one prompt section per tool.
const (
	listGuidance  = "Use the list tool — not shell ls — to see what a directory contains. It returns the direct children of one directory, files and subdirectories alike, and defaults to the session workspace, so it is the first step for orienting in an unfamiliar project. When a result is capped, continue with the offset named in its footer."
	readGuidance  = "Use the read tool — not shell commands like cat — to inspect text files. Results include line numbers. Use offset and limit to continue reading large files."
	writeGuidance = "Use the write tool to create files or completely replace file contents. Existing files are overwritten, so read an existing file first (the default fs-policy requires it) and prefer edit for targeted changes."
	editGuidance  = "Use the edit tool for targeted changes to existing UTF-8 text files. It replaces literal old_string with new_string; by default old_string must appear exactly once. If old_string appears multiple times, provide a more specific old_string or set replace_all to true. Read the file first (the default fs-policy requires it), unless you just created or edited it in this session."
)

const (
	listDescription  = "List the direct children of one directory, with their type. Entries are directories first, then files, each alphabetical; up to %d are returned from the requested offset, and the footer gives the complete count plus a next offset when more remain. It includes subdirectories and is the tool for seeing one directory's contents."
	readDescription  = "Read a UTF-8 text file and return line-numbered content."
	writeDescription = "Create or fully replace a UTF-8 text file."
	editDescription  = "Edit an existing UTF-8 text file by replacing literal text."
)

func apply(ctx *runtime.Context, cfg Config) error {
	defs, err := newToolset(ctx, cfg).definitions()
	if err != nil {
		return err
	}
	return registry.Contribute(ctx, defs, []registry.Section{
		{Name: "tool:list", Order: 99, Text: listGuidance},
		{Name: "tool:read", Order: 100, Text: readGuidance},
		{Name: "tool:write", Order: 101, Text: writeGuidance},
		{Name: "tool:edit", Order: 102, Text: editGuidance},
	})
}

// definitions builds the four tools, in the order the model sees them.
func (t *toolset) definitions() ([]registry.Tool, error) {
	list, err := registry.Define("list", fmt.Sprintf(listDescription, t.cfg.ListMaxEntries), t.list, renderList)
	if err != nil {
		return nil, err
	}
	read, err := registry.Define("read", readDescription, t.read, renderRead,
		registry.Describe("limit", fmt.Sprintf("Maximum number of lines to return. Defaults to %d.", t.cfg.ReadLimit)))
	if err != nil {
		return nil, err
	}
	write, err := registry.Define("write", writeDescription, t.write, renderWrite)
	if err != nil {
		return nil, err
	}
	edit, err := registry.Define("edit", editDescription, t.edit, renderEdit)
	if err != nil {
		return nil, err
	}
	parallel := func(json.RawMessage) bool { return true }
	list.ConcurrencySafe, read.ConcurrencySafe = parallel, parallel
	list.Traits = registry.Traits{ReadOnly: true, Paths: []string{"path"}}
	read.Traits = registry.Traits{ReadOnly: true, Paths: []string{"file_path"}}
	write.Traits = registry.Traits{Destructive: true, Paths: []string{"file_path"}}
	edit.Traits = registry.Traits{Destructive: true, Paths: []string{"file_path"}}
	return []registry.Tool{list, read, write, edit}, nil
}
