// Command demo shows a model working on a sample project through the
// filesystem tools: list, grep, read, edit, read, answer. Without
// DEEPSEEK_API_KEY a scripted model plays the conversation in-process
// through the very same DeepSeek adapter; with a key, DeepSeek does the
// work.
package main

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"time"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/agent/deepseek"
	"github.com/gordis-run/gordis/agent/inproc"
	"github.com/gordis-run/gordis/agent/scripted"
	"github.com/gordis-run/gordis/internal/rootflag"
	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/plugins/fslocal"
	"github.com/gordis-run/gordis/registry"
)

const usage = `usage: demo [flags]          run the agent on a sample project
       demo tools [flags]    print the tool definitions exactly as sent to a model (JSON)
       demo prompt [flags]   print the assembled system prompt
       demo replay [flags] [FILE]
                             run tool calls from JSON Lines without a model
       demo config schema    print the JSON Schema of a --config file
       demo help [COMMAND]   print the help of demo or of COMMAND (tools, prompt, replay, config)

The demo copies a small sample project (notes.md, README.md, src/, docs/) into
a fresh temporary workspace, removed when the demo ends, builds the default
deployment (runtime, tool registry, local filesystem, read-before-write
policy, list/read/write/edit and glob/grep tools) and runs one agent turn on
it, printing a live transcript: each tool call with its arguments, a short
form of its result, a unified diff for each edit or write, the final answer,
then steps, time and token usage.

The tools reach only the workspace and the directories given with --root
and --read-only-root (a relative DIR resolves against the workspace, not the
current directory); --unconfined lifts that.

--config FILE builds the deployment from a file of plugin entries instead
(gordis.yaml at the repository root is the default one; see docs/loader.md):
the workspace, --root, --read-only-root and --unconfined still win over its
fslocal entries.

Model:
  Without DEEPSEEK_API_KEY (or with --offline) a scripted model answers: it
  lists the workspace, greps for "status: draft", reads notes.md, edits
  "status: draft" to "status: reviewed", reads it again and answers. When
  notes.md already says "status: reviewed" (a second run on the same
  --workspace), it reads the file and answers that there is nothing to
  change. It is an OpenAI-compatible server running in-process, behind the
  same DeepSeek adapter the real API uses, and it rejects protocol mistakes
  as DeepSeek would. --script plays another conversation: a JSON array of
  steps, each with optional "reasoning", "calls" ([{"name", "args"}]) or
  "text", and "expect" (text the previous tool results must contain).
  With DEEPSEEK_API_KEY set, DeepSeek runs the turn on --prompt; the
  scripted model plays only its script, so --prompt needs the key.

Environment:
  DEEPSEEK_API_KEY   API key; when set, the demo talks to DeepSeek
  DEEPSEEK_MODEL     model name (default deepseek-v4-flash)
  DEEPSEEK_BASE_URL  API base URL (default https://api.deepseek.com)
  OPENAI_* variables are never read.

Exit status: 0 when the turn completed; 1 when it ended otherwise (model
error, step budget, interrupted, output closed) or the deployment failed; 2
on a usage error.

Flags:
`

const configUsage = `usage: demo config schema

Prints one JSON Schema (draft 2020-12) for the files --config reads: a list
of plugin entries, each config checked by its plugin's own schema. Save it
and point an editor's YAML language server at it for completion and checks:

  go run ./cmd/demo config schema > gordis.schema.json
  # yaml-language-server: $schema=gordis.schema.json   (first line of the file)
`

const toolsUsage = `usage: demo tools [flags]

Prints the tool definitions of the default deployment exactly as they are
sent to a model: a JSON array of function tools, in registration order. The
deployment is built on --workspace as it is, or on an empty temporary
directory: nothing is written into either.

Flags:
`

const promptUsage = `usage: demo prompt [flags]

Prints the system prompt the agent sends: the demo's own section, then one
section for each tool. The deployment is built on --workspace as it is, or
on an empty temporary directory: nothing is written into either.

Flags:
`

//go:embed all:sample
var sample embed.FS

func main() {
	// A write to a closed stdout then fails with EPIPE instead of killing
	// the process, so the deferred cleanups (the temporary workspace) run.
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole command, testable in-process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "help":
			return runHelp(args[1:], stdout, stderr)
		case "replay":
			return runReplay(args[1:], stdin, stdout, stderr)
		case "tools", "prompt":
			return runInspect(args[0], args[1:], stdout, stderr)
		case "config":
			return runConfig(args[1:], stdout, stderr)
		}
	}
	return runDemo(args, stdout, stderr)
}

// runHelp is `demo help [COMMAND]`: COMMAND's --help, on stdout.
func runHelp(args []string, stdout, stderr io.Writer) int {
	var c *command
	switch {
	case len(args) > 1:
		fmt.Fprintln(stderr, "demo help: at most one COMMAND (see demo --help)")
		return 2
	case len(args) == 0 || args[0] == "help":
		c = demoCommand(new(demoFlags))
	case args[0] == "tools" || args[0] == "prompt":
		c = inspectCommand(args[0], new(demoFlags))
	case args[0] == "replay":
		c = replayCommand(new(replayFlags))
	case args[0] == "config":
		c = configCommand()
	default:
		fmt.Fprintf(stderr, "demo help: unknown command %q (commands: tools, prompt, replay, config)\n", args[0])
		return 2
	}
	c.help(stdout)
	return 0
}

// A command is one of demo's commands: its name, its help and its flags.
type command struct {
	name  string // as the user types it: "demo", "demo replay"...
	usage string // the help, before the flags
	flags *flag.FlagSet
	// arg names the one positional argument the command takes, if any.
	arg string
}

func newCommand(name, usage, arg string) *command {
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	// The flag package prints its own errors and the usage on every parse
	// failure; parse reports errors on stderr and the help on stdout instead.
	fl.SetOutput(io.Discard)
	fl.Usage = func() {}
	return &command{name: name, usage: usage, flags: fl, arg: arg}
}

func (c *command) help(w io.Writer) {
	fmt.Fprint(w, c.usage)
	c.flags.SetOutput(w)
	c.flags.PrintDefaults()
	c.flags.SetOutput(io.Discard)
}

// parse handles --help (the help on stdout, exit 0) and usage errors (one
// line on stderr, exit 2); ok means go on.
func (c *command) parse(args []string, stdout, stderr io.Writer) (code int, ok bool) {
	if err := c.flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.help(stdout)
			return 0, false
		}
		c.usageError(stderr, "%v", err)
		return 2, false
	}
	switch n := c.flags.NArg(); {
	case n > 0 && c.arg == "":
		c.usageError(stderr, "unexpected argument %q", c.flags.Arg(0))
		return 2, false
	case n > 1:
		c.usageError(stderr, "at most one %s, got %d", c.arg, n)
		return 2, false
	}
	return 0, true
}

// usageError prints one line and the hint to the command's help.
func (c *command) usageError(stderr io.Writer, format string, args ...any) {
	fmt.Fprintf(stderr, "%s: %s (see %s --help)\n", c.name, fmt.Sprintf(format, args...), c.name)
}

// confinement is what the tools may reach besides the workspace, and the
// file the deployment comes from, if any.
type confinement struct {
	unconfined bool
	roots      []fslocal.Root
	config     string
}

func (c *confinement) declare(fl *flag.FlagSet) {
	fl.BoolVar(&c.unconfined, "unconfined", false, "let the tools reach any path the process may (absolute paths, \"..\", symlinks that\nleave the workspace); by default they reach only the workspace and the roots")
	rootflag.Declare(fl, &c.roots)
	fl.StringVar(&c.config, "config", "", "build the deployment from the plugin entries in `FILE` (see gordis.yaml);\nthe workspace and the flags above win over its fslocal entries")
}

func (c confinement) options(opts gordis.Options) gordis.Options {
	opts.Unconfined, opts.Roots, opts.Config = c.unconfined, c.roots, c.config
	return opts
}

type demoFlags struct {
	workspace string
	confinement
	prompt   string
	trace    string
	maxSteps int
	offline  bool
	script   string
}

const workspaceFlagHelp = "work in `DIR` instead of a temporary directory: it is created if missing and\nthe sample files are copied in, never over an existing file"

func demoCommand(f *demoFlags) *command {
	c := newCommand("demo", usage, "")
	fl := c.flags
	fl.StringVar(&f.workspace, "workspace", "", workspaceFlagHelp)
	f.confinement.declare(fl)
	fl.StringVar(&f.prompt, "prompt", "", "the user `TEXT` for DeepSeek (default \""+scripted.Prompt+"\"); it needs\nDEEPSEEK_API_KEY, since the scripted model plays only its own script")
	fl.StringVar(&f.trace, "trace", "", "write every observed runtime event to `FILE` as JSON Lines")
	fl.IntVar(&f.maxSteps, "max-steps", agent.DefaultMaxSteps, "stop the turn after `N` steps")
	fl.BoolVar(&f.offline, "offline", false, "use the scripted model even when DEEPSEEK_API_KEY is set")
	fl.StringVar(&f.script, "script", "", "play the scripted conversation in `FILE` (JSON, the format of agent/scripted/script.json)\ninstead of the built-in one; implies --offline")
	return c
}

// inspectCommand is `demo tools` or `demo prompt`: the workspace and
// confinement flags of demo, nothing else.
func inspectCommand(what string, f *demoFlags) *command {
	text := toolsUsage
	if what == "prompt" {
		text = promptUsage
	}
	c := newCommand("demo "+what, text, "")
	c.flags.StringVar(&f.workspace, "workspace", "", "the workspace `DIR` the prompt names, which must exist (default: an empty\ntemporary directory); nothing is copied into it")
	f.confinement.declare(c.flags)
	return c
}

func runDemo(args []string, stdout, stderr io.Writer) int {
	var f demoFlags
	c := demoCommand(&f)
	if code, ok := c.parse(args, stdout, stderr); !ok {
		return code
	}
	if f.maxSteps < 1 {
		c.usageError(stderr, "--max-steps must be at least 1")
		return 2
	}
	key := deepseek.ConfigFromEnv(os.Getenv).APIKey
	offline := key == "" || f.offline || f.script != ""
	if offline && f.prompt != "" {
		c.usageError(stderr, "--prompt needs DEEPSEEK_API_KEY: the scripted model plays only its own script, on the prompt %q", scripted.Prompt)
		return 2
	}
	d, closeDeployment, err := deploy(f.workspace, true, f.confinement, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	var closeTrace func() error
	defer func() {
		// Closing the deployment disposes the plugins and drains the
		// observers, so the trace also records the teardown.
		closeDeployment()
		if closeTrace != nil {
			if err := closeTrace(); err != nil {
				fmt.Fprintln(stderr, "demo: trace:", err)
			}
		}
	}()

	var (
		model  agent.Model
		mode   string
		prompt = cmp.Or(f.prompt, scripted.Prompt)
	)
	if offline {
		model, mode, err = scriptedModel(f, key, d.Workspace)
	} else {
		model, mode, err = deepseekModel()
	}
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	if f.trace != "" {
		if closeTrace, err = startTrace(d, f.trace); err != nil {
			fmt.Fprintln(stderr, "demo:", err)
			return 1
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, closed := context.WithCancel(ctx)
	defer closed()
	out := &output{w: stdout, closed: closed}
	fmt.Fprintln(out, "mode:", mode)
	if f.workspace == "" {
		fmt.Fprintln(out, "workspace:", d.Workspace, "(temporary, removed when the demo ends)")
	} else {
		fmt.Fprintln(out, "workspace:", d.Workspace)
	}
	tr := newTranscript(out, d.Workspace)
	if err := tr.listen(d.Root); err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	a, err := agent.New(d.Root, agent.Config{Model: model, Tools: d.Tools, Prompt: d.Prompt, Cwd: d.Workspace, MaxSteps: f.maxSteps})
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	defer a.Close()

	start := time.Now()
	end, err := a.Run(ctx, prompt)
	tr.summary(end, time.Since(start))
	switch {
	case outputGone(out.err):
		return 0
	case out.err != nil:
		err = fmt.Errorf("cannot write the transcript: %w", out.err)
	case end.Reason == agent.ReasonCompleted:
		return 0
	case end.Reason == agent.ReasonAborted:
		err = errors.New("interrupted")
	case err == nil:
		err = fmt.Errorf("the turn stopped after %d steps (%s)", end.Steps, end.Reason)
	}
	fmt.Fprintln(stderr, "demo:", err)
	return 1
}

// output is stdout as the transcript writes it. The first write error
// (a pipe closed early, a full disk) is kept and ends the turn: nobody would
// see the rest, and the model should not go on working unseen. Writes come
// from one goroutine at a time: the loop emits its events from one.
type output struct {
	w      io.Writer
	closed context.CancelFunc
	err    error
}

func (o *output) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = err
		o.closed()
	}
	return n, err
}

// runInspect prints what a model would be sent: the tools or the prompt.
func runInspect(what string, args []string, stdout, stderr io.Writer) int {
	var f demoFlags
	if code, ok := inspectCommand(what, &f).parse(args, stdout, stderr); !ok {
		return code
	}
	d, closeDeployment, err := deploy(f.workspace, false, f.confinement, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	defer closeDeployment()
	var out []byte
	if what == "prompt" {
		out = []byte(d.Prompt.Assemble() + "\n")
	} else if out, err = toolsJSON(d.Tools); err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	if _, err := stdout.Write(out); err != nil && !outputGone(err) {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	return 0
}

func configCommand() *command { return newCommand("demo config", configUsage, "schema") }

// runConfig is `demo config schema`: see configUsage.
func runConfig(args []string, stdout, stderr io.Writer) int {
	c := configCommand()
	if code, ok := c.parse(args, stdout, stderr); !ok {
		return code
	}
	if c.flags.Arg(0) != "schema" {
		c.usageError(stderr, "want the subcommand schema")
		return 2
	}
	schema, err := loader.Schema(gordis.Catalog())
	if err != nil {
		fmt.Fprintln(stderr, "demo config:", err)
		return 1
	}
	if _, err := stdout.Write(append(schema, '\n')); err != nil && !outputGone(err) {
		fmt.Fprintln(stderr, "demo config:", err)
		return 1
	}
	return 0
}

// outputGone reports whether err is a write to a pipe whose reader has
// gone (head, a pager quit early): the command then stops quietly, with
// status 0, as Unix tools do; nobody is left to read an error.
func outputGone(err error) bool { return errors.Is(err, syscall.EPIPE) }

// toolsJSON is the tool definitions as sent to DeepSeek, indented.
func toolsJSON(tools *registry.Registry) ([]byte, error) {
	raw, err := deepseek.ToolsJSON(tools.Definitions())
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// workspace returns the directory to work in, dir or a temporary one, and
// its cleanup (a temporary directory is removed). With seed, dir is created
// if missing and the sample project is copied in; without, dir is used as
// it is and the temporary directory stays empty.
func workspace(dir string, seed bool) (string, func(), error) {
	cleanup := func() {}
	switch {
	case dir == "":
		tmp, err := os.MkdirTemp("", "gordis-demo-*")
		if err != nil {
			return "", nil, err
		}
		dir, cleanup = tmp, func() { os.RemoveAll(tmp) }
	case !seed:
		return dir, cleanup, nil
	default:
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, err
		}
	}
	if seed {
		if err := copySample(dir); err != nil {
			cleanup()
			return "", nil, err
		}
	}
	return dir, cleanup, nil
}

// copySample writes the sample files into dir, keeping any that exist.
func copySample(dir string) error {
	root, _ := fs.Sub(sample, "sample")
	return fs.WalkDir(root, ".", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(path))
		if e.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := fs.ReadFile(root, path)
		if err != nil {
			return err
		}
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		return errors.Join(err, f.Close())
	})
}

// deploy prepares the workspace (see workspace), builds the default
// deployment on it and adds the demo's own prompt section, which tells the
// model where it works. Its cleanup closes the deployment, then removes a
// temporary workspace.
func deploy(workspaceFlag string, seed bool, conf confinement, stderr io.Writer) (*gordis.Deployment, func(), error) {
	dir, removeWorkspace, err := workspace(workspaceFlag, seed)
	if err != nil {
		return nil, nil, err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	d, closeDeployment, err := gordis.Build(conf.options(gordis.Options{Workspace: dir, Logger: logger}))
	if err != nil {
		removeWorkspace()
		return nil, nil, fmt.Errorf("cannot build the deployment: %w", err)
	}
	cleanup := func() {
		closeDeployment()
		removeWorkspace()
	}
	section := registry.Section{Name: "demo:workspace", Order: 0, Text: "You are a careful coding agent. Work only inside the workspace " +
		d.Workspace + "; relative paths resolve against it. Use the tools to inspect files before you change them, then say briefly what you did."}
	if err := d.Prompt.Add(d.Root, section); err != nil {
		cleanup()
		return nil, nil, err
	}
	return d, cleanup, nil
}

// deepseekModel is DeepSeek, configured from the environment, and its mode
// line.
func deepseekModel() (agent.Model, string, error) {
	cfg := deepseek.ConfigFromEnv(os.Getenv)
	m, err := deepseek.New(cfg)
	if err != nil {
		return nil, "", err
	}
	base := cfg.BaseURL
	if base == "" {
		base = deepseek.DefaultBaseURL
	}
	return m, fmt.Sprintf("DeepSeek (%s at %s)", m.Name(), base), nil
}

// scriptedModel is the scripted model in-process behind the DeepSeek
// adapter, with its mode line; it answers scripted.Prompt. Without
// --script it plays the built-in conversation, or, when notes.md in the
// workspace is already reviewed, one that checks and changes nothing.
func scriptedModel(f demoFlags, key, workspace string) (agent.Model, string, error) {
	why := "no DEEPSEEK_API_KEY"
	if key != "" {
		why = "--offline"
	}
	var script []scripted.Step
	switch {
	case f.script != "":
		why = "--script " + f.script
		data, err := os.ReadFile(f.script)
		if err != nil {
			return nil, "", err
		}
		if err := json.Unmarshal(data, &script); err != nil {
			return nil, "", fmt.Errorf("script %s: %s (want a non-empty JSON array of steps)", f.script, jsonProblem(err))
		}
		if len(script) == 0 {
			return nil, "", fmt.Errorf("script %s: no steps (want a non-empty JSON array of steps)", f.script)
		}
	case alreadyReviewed(workspace):
		why += "; notes.md is already reviewed, so the script only checks it"
		script = reviewedScript
	}
	m, err := deepseek.New(deepseek.Config{
		APIKey:     "offline",
		BaseURL:    "http://scripted.invalid",
		Model:      "scripted",
		HTTPClient: &http.Client{Transport: inproc.Transport{Handler: scripted.New(script)}},
	})
	if err != nil {
		return nil, "", err
	}
	return m, "scripted model (" + why + "), served in-process behind the DeepSeek adapter", nil
}

// alreadyReviewed reports whether notes.md in dir is what the built-in
// script leaves behind, so that a second run on it has nothing to edit.
func alreadyReviewed(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "notes.md"))
	return err == nil && bytes.Contains(data, []byte("status: reviewed")) && !bytes.Contains(data, []byte("status: draft"))
}

// reviewedScript answers the built-in prompt on a workspace whose notes.md
// is already reviewed.
var reviewedScript = []scripted.Step{
	{Reasoning: "I'll look at the notes first.", Calls: []scripted.Call{{Name: "read", Args: json.RawMessage(`{"file_path": "notes.md"}`)}}},
	{Expect: "status: reviewed", Text: "notes.md is already marked as reviewed: nothing to change."},
}

// jsonProblem words a JSON decoding error for a person, without the Go
// types the encoding/json messages name.
func jsonProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		at := ""
		if typeErr.Field != "" {
			// The last name of the path: the ones before it may be Go's.
			at = fmt.Sprintf("%q: ", typeErr.Field[strings.LastIndexByte(typeErr.Field, '.')+1:])
		}
		return fmt.Sprintf("%s%s where %s belongs", at, article(typeErr.Value), jsonKind(typeErr.Type))
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return fmt.Sprintf("invalid JSON at byte %d: %s", syntaxErr.Offset, syntaxErr)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// jsonKind names the JSON value a Go type decodes from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "a number"
}

// article words the JSON value encoding/json reports ("string", "bool",
// "object", "number 1.5"...) with its article.
func article(value string) string {
	switch value {
	case "array", "object":
		return "an " + value
	case "bool":
		return "true or false"
	}
	return "a " + value
}
