package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/internal/schema"
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
		if outputGone(err) {
			return 0
		}
		fmt.Fprintf(stderr, "demo replay: %v\n", err)
		var le *lineError
		if errors.As(err, &le) {
			return 2
		}
		return 1
	}
	return 0
}

// replayCall is one call of the input. Args are the bytes of the line,
// handed over to the registry (registry.Call.HandOverArgs): the line is
// storage of its own, read once, so a write's 64 MiB content is decoded
// where it stands, never copied.
type replayCall struct {
	Tool    string
	Args    json.RawMessage
	Session string
	Cancel  bool
}

// set stores the member m of a call object, as encoding/json would into
// fields tagged with the member names (a null leaves a field as it is),
// except that keys match exactly: any other key is an error.
func (c *replayCall) set(m schema.Member) error {
	var field any
	switch m.Key {
	case "args":
		c.Args = m.Value
		return nil
	case "tool":
		field = &c.Tool
	case "session":
		field = &c.Session
	case "cancel":
		field = &c.Cancel
	default:
		return fmt.Errorf("unknown field %q", m.Key)
	}
	return inField(m.Key, json.Unmarshal(m.Value, field))
}

// inField names the member of a type error, which encoding/json leaves
// unnamed for a value decoded on its own.
func inField(key string, err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		typeErr.Field = key
	}
	return err
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
	lines := newLineReader(in)
	var buf bytes.Buffer // one line's results
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the texts are shown to people, keep < > & as they are
	for n := 1; ; n++ {
		text, err := lines.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if n == 1 {
			text = bytes.TrimPrefix(text, []byte(byteOrderMark))
		}
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		step, err := r.parse(n, text)
		if err != nil {
			return err
		}
		buf.Reset()
		for i, res := range r.execute(step) {
			if err := encodeResult(enc, step.calls[i], res); err != nil {
				return fmt.Errorf("line %d: %s: %w", n, res.Tool, err)
			}
		}
		if _, err := out.Write(buf.Bytes()); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
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
	line, batch, err := decodeLine(text)
	if err != nil {
		return step{}, malformed("%s", err)
	}
	if batch == nil {
		if line.Tool == "" {
			return step{}, malformed(`missing "tool"`)
		}
		return step{calls: []*registry.Call{r.call(line)}, cancel: line.Cancel}, nil
	}
	if line.Tool != "" || line.Args != nil || line.Session != "" {
		return step{}, malformed(`a batch line takes only "batch" and "cancel"`)
	}
	if len(batch) == 0 {
		return step{}, malformed("empty batch")
	}
	calls := make([]*registry.Call, len(batch))
	for i, c := range batch {
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

// decodeLine decodes a line into its call, or, when it has a "batch"
// (batch not nil), the calls of the batch. It words errors as
// encoding/json would, decoding the line into fields named like the
// members: a syntax error first, then the first unknown key or value of
// the wrong type, in the order of the line.
func decodeLine(text []byte) (line replayCall, batch []replayCall, err error) {
	if bytes.TrimSpace(text)[0] != '{' {
		return line, nil, errors.New("expected a JSON object")
	}
	members, ok := schema.Object(text)
	if !ok {
		return line, nil, invalidLine(text)
	}
	for _, m := range members {
		if m.Key == "batch" {
			batch, err = batchCalls(m.Value)
		} else {
			err = line.set(m)
		}
		if err != nil {
			return line, nil, errors.New(jsonProblem(err))
		}
	}
	return line, batch, nil
}

// batchCalls decodes the value of "batch": an array of call objects, or
// null for none (nil).
func batchCalls(raw []byte) ([]replayCall, error) {
	elems, ok := schema.Elements(raw)
	if !ok {
		var none []json.RawMessage // null, or the type error
		return nil, inField("batch", json.Unmarshal(raw, &none))
	}
	calls := make([]replayCall, len(elems))
	for i, elem := range elems {
		members, ok := schema.Members(elem)
		if !ok {
			// null leaves the call empty; anything else is a type error.
			if err := json.Unmarshal(elem, &calls[i]); err != nil {
				return nil, inField("batch", err)
			}
		}
		for _, m := range members {
			if err := calls[i].set(m); err != nil {
				return nil, err
			}
		}
	}
	return calls, nil
}

// invalidLine words why text, which schema.Object rejects, is not one
// JSON object: encoding/json's account of its first value, or where the line
// ends too early; a first value that is complete is read, and its errors
// come before the data after it.
func invalidLine(text []byte) error {
	var first json.RawMessage
	switch err := json.NewDecoder(bytes.NewReader(text)).Decode(&first); {
	case errors.Is(err, io.ErrUnexpectedEOF):
		end := len(bytes.TrimRight(text, " \t\r"))
		return fmt.Errorf("invalid JSON at byte %d: the line ends before the JSON object does", end)
	case err != nil:
		return errors.New(jsonProblem(err))
	}
	if _, _, err := decodeLine(first); err != nil {
		return err
	}
	return errors.New("unexpected data after the JSON object")
}

func (r *replayer) call(c replayCall) *registry.Call {
	r.calls++
	return &registry.Call{
		ID:      "replay-" + strconv.Itoa(r.calls),
		Tool:    c.Tool,
		Args:    c.Args,
		Session: r.session(c.Session),
		// Nothing reads the line after the call: the output is made of
		// the result alone.
		HandOverArgs: true,
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
func (r *replayer) execute(s step) []*registry.Result {
	ctx := context.Background()
	if s.cancel {
		c, stop := context.WithCancel(ctx)
		stop()
		ctx = c
	}
	if s.batch {
		return r.tools.ExecuteBatch(ctx, s.calls)
	}
	return []*registry.Result{r.tools.Execute(ctx, s.calls[0])}
}

// encodeResult encodes the output object of res, the result of call.
func encodeResult(enc *json.Encoder, call *registry.Call, res *registry.Result) error {
	head := resultHead{Tool: res.Tool, Session: call.Session.ID(), IsError: res.IsError, Text: res.Text}
	if res.IsError {
		return enc.Encode(failedResult{head, res.Error})
	}
	value, err := printable(res.Value)
	if err != nil {
		return err
	}
	if err := enc.Encode(okResult{head, value}); err != nil {
		return errNoJSON // the head always encodes: the value has no JSON form
	}
	return nil
}

type resultHead struct {
	Tool    string `json:"tool"`
	Session string `json:"session"`
	IsError bool   `json:"isError"`
	Text    string `json:"text"`
}

type okResult struct {
	resultHead
	Value any `json:"value"`
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
