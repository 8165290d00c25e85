package toolfs

import (
	"context"
	"errors"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// WriteResult is the canonical value of a write call. Before is nil on
// create, or when the replaced file was not text or too large to hold
// (Omitted); both texts are LF-normalised.
type WriteResult struct {
	Path      string       `json:"path"`
	Operation fs.Operation `json:"operation"`
	Before    *string      `json:"before"`
	After     string       `json:"after"`
	// Omitted reports that the provider did not hold the replaced file, so
	// there is no diff to show although the file existed.
	Omitted bool `json:"omitted,omitempty"`

	written int64 // the content's bytes, as stored (After is LF-normalised)
}

// EditResult is the canonical value of an edit call, LF-normalised.
type EditResult struct {
	Path   string `json:"path"`
	Before string `json:"before"`
	After  string `json:"after"`
	// Omitted reports that the file, or the edit's result, was too large for
	// the provider to hold: Before and After are empty and there is no diff
	// to show.
	Omitted bool `json:"omitted,omitempty"`

	replaceAll bool // chooses the acknowledgement's wording
}

func renderWrite(r *WriteResult) string {
	verb := "Created file"
	if r.Operation == fs.OpUpdate {
		verb = "Updated file"
	}
	return "<path>" + r.Path + "</path>\n<type>file</type>\n<content>\n" + verb + "\n</content>"
}

// renderEdit words the acknowledgement by the replace_all flag, not by the
// number of replacements.
func renderEdit(r *EditResult) string {
	if r.replaceAll {
		return "The file " + r.Path + " has been updated. All occurrences were successfully replaced."
	}
	return "The file " + r.Path + " has been updated successfully."
}

// decide asks the single decision slot of event (write or edit intent) for
// the guard of call's mutation of target; nil, the fallback, is no guard. It
// waits no longer than ctx lasts: a slot that has not decided by then
// refuses the mutation, which is never attempted, with the error of a
// cancelled one ("<verb> aborted").
func decide[I any](ctx context.Context, t *toolset, call *registry.Call, target fs.Target, event runtime.Waterfall[fs.IntentRequest, *I], verb string) (*I, error) {
	req := fs.IntentRequest{Target: target, Actor: call}.WithContext(ctx)
	guard, err := registry.Await(ctx, t.rt.Logger(), event.Name(), call, func() (*I, error) {
		return event.Run(t.rt, req, nil)
	})
	if errors.Is(err, registry.ErrAbandoned) {
		return nil, fs.Aborted(verb, context.Cause(ctx))
	}
	return guard, err
}

// write asks the single decision slot for a guard (none without a policy),
// writes, and records the post-write version. The tool itself never stats.
func (t *toolset) write(ctx context.Context, call *registry.Call, args writeArgs) (*WriteResult, error) {
	if err := args.validate(); err != nil {
		return nil, err
	}
	fsys, target, err := t.resolve(ctx, call, args.FilePath)
	if err != nil {
		return nil, err
	}
	intent, err := decide(ctx, t, call, target, fs.WriteIntentEvent, "write")
	if err != nil {
		return nil, err
	}
	out, err := fsys.WriteText(ctx, target, args.Content, intent)
	if err != nil {
		return nil, err
	}
	if err := t.observed(ctx, call, target, out.Version); err != nil {
		return nil, err
	}
	return &WriteResult{Path: target.Path, Operation: out.Operation, Before: out.Before, After: out.After, Omitted: out.Omitted, written: int64(len(args.Content))}, nil
}

// edit is write's twin over EditText.
func (t *toolset) edit(ctx context.Context, call *registry.Call, args editArgs) (*EditResult, error) {
	if err := args.validate(); err != nil {
		return nil, err
	}
	fsys, target, err := t.resolve(ctx, call, args.FilePath)
	if err != nil {
		return nil, err
	}
	intent, err := decide(ctx, t, call, target, fs.EditIntentEvent, "edit")
	if err != nil {
		return nil, err
	}
	out, err := fsys.EditText(ctx, target, fs.EditRequest{Old: args.OldString, New: args.NewString, ReplaceAll: args.ReplaceAll}, intent)
	if err != nil {
		return nil, err
	}
	if err := t.observed(ctx, call, target, out.Version); err != nil {
		return nil, err
	}
	return &EditResult{Path: target.Path, Before: out.Before, After: out.After, Omitted: out.Omitted, replaceAll: args.ReplaceAll}, nil
}
