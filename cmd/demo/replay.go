package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"unicode/utf8"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/registry"
)

const replayUsage = `usage: demo replay [flags] [FILE]

Runs tool calls without a model, through the default deployment (the same
composition the agent uses). Calls are read from FILE, or from stdin when FILE
is absent or "-", as JSON Lines; blank lines and a UTF-8 byte order mark at
the start are skipped. A line is one call:

  {"tool": "read", "args": {"file_path": "a.txt"}, "session": "main", "cancel": false}

  tool      required: the tool name
  args      the argument object (default {})
  session   the session name (default "main"); every name is its own session,
            rooted at the workspace, so the policy keeps their reads apart
  cancel    true runs the call with an already-cancelled context

or one assistant message's calls, run as a batch (concurrency-safe calls in
parallel, results still in order):

  {"batch": [call, ...], "cancel": false}

where cancel applies to the whole batch and the calls carry none of their own.
Any other key is an error, so a misspelt key never runs silently.

Output is one JSON object per call, in input order:

  {"tool": ..., "session": ..., "isError": false, "text": ..., "value": ...}
  {"tool": ..., "session": ..., "isError": true, "text": ...,
   "error": {"message": ..., "name": ..., "code": ...}}

value is the tool's canonical value, with every string in it longer than
4096 bytes cut at a character boundary and ended with "… (N more bytes)"
(an edit's before and after of a large file); name and code appear when the
error has them. text is what a model would see.

Exit status: 0 when every line ran (tool errors are results, not failures);
2 on a usage error, an unreadable FILE or a malformed line, reported with its
line number (the lines before it have run); 1 when the deployment cannot start
or reading or writing fails midway.

Flags:
`

type replayFlags struct {
	workspace string
	confinement
	noPolicy bool
}

func replayCommand(f *replayFlags) *command {
	c := newCommand("demo replay", replayUsage, "FILE")
	c.flags.StringVar(&f.workspace, "workspace", "", "the `DIR` relative paths resolve against (default: the current directory)")
	f.confinement.declare(c.flags)
	c.flags.BoolVar(&f.noPolicy, "no-policy", false, "leave out the read-before-write policy (unconditional writes and edits)")
	return c
}

// runReplay is `demo replay`: see replayUsage.
func runReplay(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var f replayFlags
	c := replayCommand(&f)
	if code, ok := c.parse(args, stdout, stderr); !ok {
		return code
	}
	in := stdin
	if name := c.flags.Arg(0); name != "" && name != "-" {
		file, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(stderr, "demo replay: %v\n", err)
			return 2
		}
		defer file.Close()
		in = file
	}

	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	dep, cleanup, err := gordis.Build(f.options(gordis.Options{Workspace: f.workspace, NoPolicy: f.noPolicy, Logger: logger}))
	if err != nil {
		fmt.Fprintf(stderr, "demo replay: %v\n", err)
		return 1
	}
	defer cleanup()

	r := &replayer{tools: dep.Tools, cwd: dep.Workspace, sessions: map[string]*replaySession{}}
	defer r.close()
	if err := r.run(in, stdout); err != nil {
		fmt.Fprintf(stderr, "demo replay: %v\n", err)
		var le *lineError
		if errors.As(err, &le) {
			return 2
		}
		return 1
	}
	return 0
}

// replayCall is one call of the input.
type replayCall struct {
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args"`
	Session string          `json:"session"`
	Cancel  bool            `json:"cancel"`
}

// replayLine is one input line: a call, or a batch with an optional cancel.
type replayLine struct {
	replayCall
	Batch []replayCall `json:"batch"`
}

// lineError is a malformed input line; it stops the run with status 2.
type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string { return "line " + strconv.Itoa(e.line) + ": " + e.msg }

type replayer struct {
	tools    *registry.Registry
	cwd      string
	sessions map[string]*replaySession
	calls    int // numbers the call IDs
}

// run executes the lines of in one by one, writing each result as it comes.
func (r *replayer) run(in io.Reader, out io.Writer) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false) // the texts are shown to people, keep < > & as they are
	br := bufio.NewReader(in)
	for n := 1; ; n++ {
		text, readErr := br.ReadBytes('\n')
		if readErr != nil && readErr != io.EOF {
			return readErr
		}
		if n == 1 {
			text = bytes.TrimPrefix(text, []byte(byteOrderMark))
		}
		if len(bytes.TrimSpace(text)) > 0 {
			step, err := r.parse(n, text)
			if err != nil {
				return err
			}
			results, err := r.execute(step)
			if err != nil {
				return fmt.Errorf("line %d: %w", n, err)
			}
			for _, res := range results {
				if err := enc.Encode(res); err != nil {
					return fmt.Errorf("line %d: %s: %w", n, res.head().Tool, err)
				}
			}
		}
		if readErr == io.EOF {
			return nil
		}
	}
}

// byteOrderMark is UTF-8's, which some editors write at the start of a file.
const byteOrderMark = "\uFEFF"

// step is what one input line asks for.
type step struct {
	calls         []*registry.Call
	batch, cancel bool
}

// parse decodes line n into the registry calls it stands for.
func (r *replayer) parse(n int, text []byte) (step, error) {
	malformed := func(format string, args ...any) error {
		return &lineError{line: n, msg: fmt.Sprintf(format, args...)}
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	var line replayLine
	if text = bytes.TrimSpace(text); text[0] != '{' {
		return step{}, malformed("expected a JSON object")
	}
	if err := dec.Decode(&line); err != nil {
		return step{}, malformed("%s", jsonProblem(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return step{}, malformed("unexpected data after the JSON object")
	}
	if line.Batch == nil {
		if line.Tool == "" {
			return step{}, malformed(`missing "tool"`)
		}
		return step{calls: []*registry.Call{r.call(line.replayCall)}, cancel: line.Cancel}, nil
	}
	if line.Tool != "" || line.Args != nil || line.Session != "" {
		return step{}, malformed(`a batch line takes only "batch" and "cancel"`)
	}
	if len(line.Batch) == 0 {
		return step{}, malformed("empty batch")
	}
	calls := make([]*registry.Call, len(line.Batch))
	for i, c := range line.Batch {
		switch {
		case c.Tool == "":
			return step{}, malformed(`batch call %d: missing "tool"`, i+1)
		case c.Cancel:
			return step{}, malformed(`batch call %d: "cancel" belongs to the batch`, i+1)
		}
		calls[i] = r.call(c)
	}
	return step{calls: calls, batch: true, cancel: line.Cancel}, nil
}

func (r *replayer) call(c replayCall) *registry.Call {
	r.calls++
	return &registry.Call{
		ID:      "replay-" + strconv.Itoa(r.calls),
		Tool:    c.Tool,
		Args:    c.Args,
		Session: r.session(c.Session),
	}
}

// session returns the session called name, creating it on first use.
func (r *replayer) session(name string) *replaySession {
	if name == "" {
		name = "main"
	}
	s, ok := r.sessions[name]
	if !ok {
		s = &replaySession{name: name, cwd: r.cwd, done: make(chan struct{})}
		r.sessions[name] = s
	}
	return s
}

func (r *replayer) close() {
	for _, s := range r.sessions {
		close(s.done)
	}
}

// execute runs one line's calls: a single call alone, a batch as one
// assistant message.
func (r *replayer) execute(s step) ([]replayResult, error) {
	ctx := context.Background()
	if s.cancel {
		c, stop := context.WithCancel(ctx)
		stop()
		ctx = c
	}
	var results []*registry.Result
	if s.batch {
		results = r.tools.ExecuteBatch(ctx, s.calls)
	} else {
		results = []*registry.Result{r.tools.Execute(ctx, s.calls[0])}
	}
	out := make([]replayResult, len(results))
	for i, res := range results {
		head := resultHead{
			Tool:    res.Tool,
			Session: s.calls[i].Session.ID(),
			IsError: res.IsError,
			Text:    res.Text,
		}
		if res.IsError {
			out[i] = failedResult{head, res.Error}
		} else {
			value, err := valueJSON(res.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", res.Tool, err)
			}
			out[i] = okResult{head, value}
		}
	}
	return out, nil
}

// replayResult is one output object: okResult or failedResult.
type replayResult interface{ head() resultHead }

type resultHead struct {
	Tool    string `json:"tool"`
	Session string `json:"session"`
	IsError bool   `json:"isError"`
	Text    string `json:"text"`
}

func (h resultHead) head() resultHead { return h }

type okResult struct {
	resultHead
	Value json.RawMessage `json:"value"`
}

// maxValueString bounds each string of a printed value: an edit of a
// 50 MB file would otherwise print its before and after in full, a line of
// over 100 MB.
const maxValueString = 4096

// valueJSON is a tool's value as printed: JSON with every string longer
// than maxValueString cut, so that one output line stays readable.
func valueJSON(v any) (json.RawMessage, error) {
	raw, err := marshalText(v)
	if err != nil {
		// encoding/json names the Go type; the tool's author needs only this.
		return nil, errors.New("the tool's value has no JSON form")
	}
	return boundStrings(raw, maxValueString)
}

// marshalText is json.Marshal without escaping < > &: the texts are shown
// to people, and full of <path> tags.
func marshalText(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// boundStrings cuts every string literal of the JSON document raw longer
// than limit bytes at a character boundary and ends it with the number of
// bytes left out. raw comes from encoding/json, so it is valid.
func boundStrings(raw []byte, limit int) ([]byte, error) {
	var out []byte // nil until a string is cut
	copied := 0    // raw[:copied] is in out
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		end := i + 1 // the closing quote
		for raw[end] != '"' {
			if raw[end] == '\\' {
				end++
			}
			end++
		}
		// An escape is longer than what it stands for, so a literal of at
		// most limit bytes holds a string of at most limit bytes.
		if end-i-1 > limit {
			var s string
			if err := json.Unmarshal(raw[i:end+1], &s); err != nil {
				return nil, err
			}
			if len(s) > limit {
				cut := limit
				for !utf8.RuneStart(s[cut]) {
					cut--
				}
				lit, err := marshalText(fmt.Sprintf("%s… (%d more bytes)", s[:cut], len(s)-cut))
				if err != nil {
					return nil, err
				}
				out = append(append(out, raw[copied:i]...), lit...)
				copied = end + 1
			}
		}
		i = end
	}
	if out == nil {
		return raw, nil
	}
	return append(out, raw[copied:]...), nil
}

type failedResult struct {
	resultHead
	Error *registry.ErrorInfo `json:"error"`
}

// replaySession is a session named by the input. Its ID is that name, so
// traces read like the input; each name is a distinct value, hence a distinct
// policy owner.
type replaySession struct {
	name, cwd string
	done      chan struct{}
}

var _ registry.Session = (*replaySession)(nil)

func (s *replaySession) ID() string            { return s.name }
func (s *replaySession) Cwd() string           { return s.cwd }
func (s *replaySession) Done() <-chan struct{} { return s.done }
