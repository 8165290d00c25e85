// Package fs is the filesystem provider seam: the interface every backend
// implements, its value types, its structured error, and the declarations of
// the fs/* events. It does no I/O.
//
// A consumer resolves a path once into a [Target] and hands the target to
// every other method. Every failure is an [*Error] with a stable code and a
// model-facing message built on the target's display path, for example
// `cannot read "/w/a.txt": binary file` (FS_NOT_TEXT); errors.Is matches
// errors by code against the Err* sentinels. Package fstest checks a
// provider against this contract; docs/filesystem.md describes it in full.
//
// A provider may confine itself to some directory trees: it then refuses a
// path that leaves them (lexically, or through a symlink) with
// CodeSandboxDenied, naming the path and the tree, for example
// `cannot resolve "/etc/hostname": outside the workspace "/w"`.
package fs

import (
	"cmp"
	"context"
	"io"
	"time"

	"github.com/gordis-run/gordis/runtime"
)

// Service is the "fs" service handle.
var Service = runtime.NewService[FileSystem]("fs")

// FileSystem is the provider seam. Every method honours ctx cancellation with
// a CodeAborted error ("<verb> aborted": resolve, stat, lstat, list, read,
// write, edit), and maps OS failures to CodePermission or CodeIO as
// `cannot <verb> "<path>": <reason>`, never raw.
type FileSystem interface {
	// Resolve turns path (relative paths against cwd, or the provider's
	// default when cwd is "") into a Target; the file need not exist. A
	// blank path is CodeNotFound "file_path must be a non-empty string"; an
	// ancestor that is not a directory is CodeNotFound `cannot resolve
	// "<p>": a parent path segment is not a directory`.
	// A confined provider refuses a path outside its trees here, with
	// CodeSandboxDenied; a mutation under a read-only tree is refused by
	// WriteText or EditText.
	Resolve(ctx context.Context, path, cwd string) (Target, error)
	// Stat follows symlinks; it returns (nil, nil) when the target is absent
	// (or an ancestor is not a directory).
	Stat(ctx context.Context, t Target) (*Info, error)
	// Lstat does not follow a final symlink (Type may be TypeSymlink); nil when absent.
	Lstat(ctx context.Context, path, cwd string) (*PathInfo, error)
	// ReadText returns the whole decoded text (BOM hidden, no newline
	// changes). A NUL in the first 8192 bytes is CodeNotText "binary file",
	// anything but strict UTF-8 CodeNotText "invalid UTF-8 text"; a missing
	// target is CodeNotFound "not found", a non-regular one
	// CodeNotRegularFile "not a regular file".
	ReadText(ctx context.Context, t Target) (string, error)
	// StreamText returns the decoded text as a stream, as ReadText would
	// return it, in bounded memory; a decoding error or cancellation
	// surfaces from Read as an *Error.
	StreamText(ctx context.Context, t Target) (io.ReadCloser, error)
	// ListDir returns the direct children (any order; consumers sort).
	// Children are typed through symlinks; broken links and special files
	// are TypeOther. A child that cannot be stat'ed fails the whole listing.
	ListDir(ctx context.Context, t Target) ([]DirEntry, error)
	// WriteText creates or replaces the file with exactly content, atomically,
	// under intent (nil: unconditional). Mutations of one Target.Key are
	// serialised, so guarded mutations at one version cannot both succeed.
	WriteText(ctx context.Context, t Target, content string, intent *WriteIntent) (*WriteOutcome, error)
	// EditText applies a literal edit, atomically, under an optional guard.
	// A missing file is CodeStaleVersion even unguarded; the guard is
	// checked before matching.
	EditText(ctx context.Context, t Target, edit EditRequest, intent *EditIntent) (*EditOutcome, error)
}

// TextSeeker is an optional capability: stream decoded text from a byte offset
// of the decoded text, only while the file is still at version v (otherwise a
// CodeStaleVersion error). Consumers that cache line positions use it.
type TextSeeker interface {
	StreamTextFrom(ctx context.Context, t Target, v Version, offset int64) (io.ReadCloser, error)
}

// LineScanner is an optional capability for consumers that need the line
// structure of a whole file version, such as an exact line count: ScanLines
// validates the decoded text of t (as StreamText would: binary sniff, strict
// UTF-8, BOM hidden) while the file is at version v, and hands it to visit
// in order, in segments that end anywhere, each with its count of '\n'
// bytes. A provider may read and validate ahead in parallel, but calls visit
// sequentially on the calling goroutine and only with text already
// validated, so an invalid file fails before any of its invalid part is
// visited. text is valid only during the call. An error from visit stops
// the scan and is returned as is; a file that is not, or is no longer, at
// version v is CodeStaleVersion, checked before and after the scan.
type LineScanner interface {
	ScanLines(ctx context.Context, t Target, v Version, visit func(text []byte, newlines int) error) error
}

// Target names one file for a provider: an opaque identity key (shared by all
// aliases of a file, stable across the file's creation; locks, versions and
// observations are per key) and the display path used in every message.
type Target struct {
	Key  string `json:"key"`
	Path string `json:"path"`
}

// Version is an opaque token that changes whenever the file changes.
type Version string

// Type classifies a filesystem object.
type Type string

const (
	TypeFile      Type = "file"
	TypeDirectory Type = "directory"
	TypeOther     Type = "other"
	TypeSymlink   Type = "symlink" // only from Lstat
)

// Info is what Stat reports. Size is -1 when unknown.
type Info struct {
	Version Version
	Type    Type
	Size    int64
}

// PathInfo is what Lstat reports.
type PathInfo struct {
	Target Target
	Info
}

// DirEntry is one child of a listed directory. Version is "" for children that
// could not be stat'ed (broken links); Size is set for files only (-1
// otherwise); ModTime is the child's modification time, through symlinks
// (zero when unknown).
type DirEntry struct {
	Name    string
	Type    Type
	Target  Target
	Version Version
	Size    int64
	ModTime time.Time
}

// IntentKind says what a guarded write may do.
type IntentKind int

const (
	// CreateIfAbsent creates a new file and refuses to replace an existing one.
	CreateIfAbsent IntentKind = iota + 1
	// ReplaceIfVersion replaces the file only while it is at Version.
	ReplaceIfVersion
)

// WriteIntent guards a write; nil means unconditional.
type WriteIntent struct {
	Kind    IntentKind
	Version Version // for ReplaceIfVersion
}

// EditIntent guards an edit; nil means unguarded.
type EditIntent struct {
	Version Version
}

// EditRequest is a literal replacement.
type EditRequest struct {
	Old, New   string
	ReplaceAll bool
}

// Operation is what a write did.
type Operation string

const (
	OpCreate Operation = "create"
	OpUpdate Operation = "update"
)

// WriteOutcome reports a write. Before is nil on create, when the prior
// file was not text, or when it was too large to hold in memory (Omitted);
// Before and After are LF-normalised. Version is the post-write version.
type WriteOutcome struct {
	Operation Operation
	Before    *string
	After     string
	Version   Version
	// Omitted reports that the replaced file was larger than the provider
	// holds in memory, so Before is nil although the file existed.
	Omitted bool
}

// EditOutcome reports an edit, LF-normalised, with the post-edit version.
type EditOutcome struct {
	Before, After string
	Replacements  int
	Version       Version
	// Omitted reports that the file, or the result, was larger than the
	// provider holds in memory: the edit streamed, Before and After are
	// empty, and Replacements is still exact.
	Omitted bool
}

// Transfer is an optional capability of a file tool's result value (a
// registry.Result's Value): how many bytes of file content the call read
// and wrote. Observers such as the metrics plugin sum them; a value without
// it moved no file content.
type Transfer interface {
	Transferred() (read, written int64)
}

// ---- events ---------------------------------------------------------------

// Observation says an actor has seen (or produced) target at version.
type Observation struct {
	Target  Target  `json:"target"`
	Version Version `json:"version"`
	Actor   any     `json:"actor"` // opaque: the tool call record

	ctx context.Context
}

// WithContext returns o carrying ctx, the context of the call that observed.
func (o Observation) WithContext(ctx context.Context) Observation {
	o.ctx = ctx
	return o
}

// Context is the context of the call that observed (context.Background()
// when none was given). The file tools wait for fs/observed listeners no
// longer than it lasts: one still running when it ends is abandoned (it runs
// on, unawaited) and logged, and the read, write or edit it observes stands.
func (o Observation) Context() context.Context { return cmp.Or(o.ctx, context.Background()) }

// IntentRequest asks the single decision slot how a mutation may proceed.
type IntentRequest struct {
	Target Target `json:"target"`
	Actor  any    `json:"actor"`

	ctx context.Context
}

// WithContext returns r carrying ctx, the context of the call that mutates.
func (r IntentRequest) WithContext(ctx context.Context) IntentRequest {
	r.ctx = ctx
	return r
}

// Context is the context of the call that mutates (context.Background()
// when none was given). The file tools wait for the decision no longer than
// it lasts: when it ends first the mutation is refused, never attempted, as
// a cancelled one is ("write aborted", "edit aborted"), and a decision made
// later is dropped.
func (r IntentRequest) Context() context.Context { return cmp.Or(r.ctx, context.Background()) }

var (
	// ObservedEvent fires after a successful read, write or edit (emit).
	ObservedEvent = runtime.NewEvent[Observation]("fs/observed")
	// WriteIntentEvent decides the guard of a write (waterfall; nil = unconditional).
	WriteIntentEvent = runtime.NewWaterfall[IntentRequest, *WriteIntent]("fs/write-intent")
	// EditIntentEvent decides the guard of an edit (waterfall; nil = unguarded).
	EditIntentEvent = runtime.NewWaterfall[IntentRequest, *EditIntent]("fs/edit-intent")
)
