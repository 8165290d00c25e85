// Package wordcount is an example third-party plugin written only against
// the public API: it adds a "count" tool that reports the lines, words and
// bytes of a text file, reading it through the "fs" service.
//
// Counting does not show the model the file's content, so the tool announces
// no fs.ObservedEvent: a count never authorizes a later write or edit under
// the read-before-write policy.
package wordcount

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/toolfs"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// Plugin registers the count tool and its prompt section once the fs
// provider, the tool registry and the prompt service exist.
var Plugin = runtime.Func("wordcount", apply, runtime.Inject(fs.Service, registry.Tools, registry.Prompts))

// Guidance is the count tool's prompt section.
const Guidance = "Use the count tool to size up a text file (lines, words, bytes) before reading it. It does not show the content: read a file before you edit it."

const description = "Count the lines, words and bytes of a UTF-8 text file without returning its content. A word is a run of non-space characters; bytes are UTF-8 bytes, without a byte order mark."

// Args are the count tool's arguments.
type Args struct {
	FilePath string `json:"file_path" jsonschema_description:"Path of the text file to count; a relative path resolves against the session workspace."`
}

// Counts is the canonical value of a count call.
type Counts struct {
	Path  string `json:"path"`
	Lines int64  `json:"lines"`
	Words int64  `json:"words"`
	Bytes int64  `json:"bytes"`
}

func apply(ctx *runtime.Context) error {
	files, err := fs.Service.Get(ctx)
	if err != nil {
		return err
	}
	tools, err := registry.Tools.Get(ctx)
	if err != nil {
		return err
	}
	prompts, err := registry.Prompts.Get(ctx)
	if err != nil {
		return err
	}
	tool, err := registry.Define("count", description, func(ctx context.Context, call *registry.Call, args Args) (*Counts, error) {
		return count(ctx, files, call, args.FilePath)
	}, render)
	if err != nil {
		return err
	}
	// Counting only reads, so calls may run side by side in a batch, and a
	// guard such as examples/protect, which refuses a tool that does not
	// say what it changes, lets it through.
	tool.ConcurrencySafe = func(json.RawMessage) bool { return true }
	tool.Traits = registry.Traits{ReadOnly: true, Paths: []string{"file_path"}}
	if err := tools.Register(ctx, tool); err != nil {
		return err
	}
	return prompts.Add(ctx, registry.Section{Name: "tool:count", Order: 110, Text: Guidance})
}

// count streams the file through a counter: memory stays bounded whatever
// the file's size.
func count(ctx context.Context, files fs.FileSystem, call *registry.Call, path string) (*Counts, error) {
	target, err := files.Resolve(ctx, path, toolfs.SessionCwd(call, path)) // as read resolves it
	if err != nil {
		return nil, err
	}
	text, err := files.StreamText(ctx, target)
	if err != nil {
		return nil, err
	}
	defer text.Close()
	var c counter
	if _, err := io.Copy(&c, text); err != nil {
		return nil, err
	}
	lines, words, bytes := c.counts()
	return &Counts{Path: target.Path, Lines: lines, Words: words, Bytes: bytes}, nil
}

func render(c *Counts) string {
	return fmt.Sprintf("%s: %s, %s, %s", c.Path, plural(c.Lines, "line"), plural(c.Words, "word"), plural(c.Bytes, "byte"))
}

func plural(n int64, unit string) string {
	s := strconv.FormatInt(n, 10) + " " + unit
	if n != 1 {
		s += "s"
	}
	return s
}

// counter counts the lines, words and bytes of valid UTF-8 text written to
// it in pieces of any size; a rune split across two writes counts once.
type counter struct {
	lines, words, bytes int64
	inWord              bool
	last                byte              // the last byte written
	partial             [utf8.UTFMax]byte // the start of a split rune
	npartial            int
}

var _ io.Writer = (*counter)(nil)

// Write counts p. It never fails.
func (c *counter) Write(p []byte) (int, error) {
	n := len(p)
	if n == 0 {
		return 0, nil
	}
	c.bytes += int64(n)
	c.last = p[n-1]
	for c.npartial > 0 && len(p) > 0 { // complete the rune split by the last write
		c.partial[c.npartial] = p[0]
		c.npartial++
		p = p[1:]
		if buf := c.partial[:c.npartial]; utf8.FullRune(buf) {
			r, _ := utf8.DecodeRune(buf)
			c.see(unicode.IsSpace(r))
			c.npartial = 0
		}
	}
	for len(p) > 0 {
		if b := p[0]; b < utf8.RuneSelf {
			if b == '\n' {
				c.lines++
			}
			c.see(asciiSpace[b])
			p = p[1:]
			continue
		}
		if !utf8.FullRune(p) {
			c.npartial = copy(c.partial[:], p)
			break
		}
		r, size := utf8.DecodeRune(p)
		c.see(unicode.IsSpace(r))
		p = p[size:]
	}
	return n, nil
}

// see advances the word count by one character.
func (c *counter) see(space bool) {
	if !space && !c.inWord {
		c.words++
	}
	c.inWord = !space
}

// counts returns the totals so far. A last line without a final newline
// counts as a line.
func (c *counter) counts() (lines, words, bytes int64) {
	lines, words = c.lines, c.words
	if c.bytes > 0 && c.last != '\n' {
		lines++
	}
	return lines, words, c.bytes
}

var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}
