// Command demo shows a model working on a sample project through the
// filesystem tools: list, read, edit, read, answer. Without DEEPSEEK_API_KEY
// a scripted model plays the conversation in-process through the very same
// DeepSeek adapter; with a key, DeepSeek does the work.
package main

import (
	"bytes"
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
	"time"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/agent/deepseek"
	"github.com/gordis-run/gordis/agent/inproc"
	"github.com/gordis-run/gordis/agent/scripted"
	"github.com/gordis-run/gordis/registry"
)

const usage = `usage: demo [flags]                    run the agent on a sample project
       demo tools [--workspace DIR]   print the tool definitions exactly as sent to a model (JSON)
       demo prompt [--workspace DIR]  print the assembled system prompt
       demo replay [--workspace DIR] [--no-policy] [FILE]
                                      run tool calls from JSON Lines without a model (demo replay --help)

The demo copies a small sample project (notes.md, README.md, src/, docs/) into
a fresh temporary workspace, builds the default deployment (runtime, tool
registry, local filesystem, read-before-write policy, list/read/write/edit
tools) and runs one agent turn on it, printing a live transcript: each tool
call with its arguments, a short form of its result, a unified diff for each
edit or write, the final answer, then steps, time and token usage.

Model:
  Without DEEPSEEK_API_KEY (or with --offline) a scripted model answers: it
  lists the workspace, reads notes.md, edits "status: draft" to
  "status: reviewed", reads it again and answers. It is an OpenAI-compatible
  server running in-process, behind the same DeepSeek adapter the real API
  uses, and it rejects protocol mistakes as DeepSeek would. --script plays
  another conversation: a JSON array of steps, each with optional
  "reasoning", "calls" ([{"name", "args"}]) or "text", and "expect" (text the
  previous tool results must contain).
  With DEEPSEEK_API_KEY set, DeepSeek runs the turn on --prompt.

Environment:
  DEEPSEEK_API_KEY   API key; when set, the demo talks to DeepSeek
  DEEPSEEK_MODEL     model name (default deepseek-v4-flash)
  DEEPSEEK_BASE_URL  API base URL (default https://api.deepseek.com)
  OPENAI_* variables are never read.

Exit status: 0 when the turn completed; 1 when it ended otherwise (model
error, step budget, interrupted) or the deployment failed; 2 on a usage error.

Flags:
`

//go:embed all:sample
var sample embed.FS

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole command, testable in-process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "replay":
			return runReplay(args[1:], stdin, stdout, stderr)
		case "tools", "prompt":
			return runInspect(args[0], args[1:], stdout, stderr)
		}
	}
	return runDemo(args, stdout, stderr)
}

type demoFlags struct {
	workspace string
	prompt    string
	trace     string
	maxSteps  int
	offline   bool
	script    string
}

// newFlags declares the flags of `demo`; `demo tools` and `demo prompt`
// (inspect) take only --workspace.
func newFlags(name string, stdout io.Writer, f *demoFlags, inspect bool) *flag.FlagSet {
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	// The flag package prints its own errors and the usage on every parse
	// failure; parse reports errors on stderr and the help on stdout instead.
	fl.SetOutput(io.Discard)
	fl.Usage = func() {}
	fl.StringVar(&f.workspace, "workspace", "", "work in `DIR` instead of a temporary directory: it is created if missing and\nthe sample files are copied in, never over an existing file")
	if inspect {
		return fl
	}
	fl.StringVar(&f.prompt, "prompt", scripted.Prompt, "the user `TEXT` for DeepSeek (the scripted model plays its own script)")
	fl.StringVar(&f.trace, "trace", "", "write every observed runtime event to `FILE` as JSON Lines")
	fl.IntVar(&f.maxSteps, "max-steps", agent.DefaultMaxSteps, "stop the turn after `N` steps")
	fl.BoolVar(&f.offline, "offline", false, "use the scripted model even when DEEPSEEK_API_KEY is set")
	fl.StringVar(&f.script, "script", "", "play the scripted conversation in `FILE` (JSON, the format of agent/scripted/script.json)\ninstead of the built-in one; implies --offline")
	return fl
}

// parse handles --help (the usage on stdout, exit 0) and usage errors (on
// stderr, exit 2); ok means go on.
func parse(fl *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			fl.SetOutput(stdout)
			fl.PrintDefaults()
			return 0, false
		}
		fmt.Fprintf(stderr, "demo: %v (see demo --help)\n", err)
		return 2, false
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "demo: unexpected argument %q (see demo --help)\n", fl.Arg(0))
		return 2, false
	}
	return 0, true
}

func runDemo(args []string, stdout, stderr io.Writer) int {
	var f demoFlags
	if code, ok := parse(newFlags("demo", stdout, &f, false), args, stdout, stderr); !ok {
		return code
	}
	if f.maxSteps < 1 {
		fmt.Fprintln(stderr, "demo: --max-steps must be at least 1")
		return 2
	}
	d, closeDeployment, err := deploy(f.workspace, stderr)
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

	model, mode, prompt, err := chooseModel(f)
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
	fmt.Fprintln(stdout, "mode:", mode)
	fmt.Fprintln(stdout, "workspace:", d.Workspace)
	tr := newTranscript(stdout, d.Workspace)
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

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	end, err := a.Run(ctx, prompt)
	tr.summary(end, time.Since(start))
	if end.Reason != agent.ReasonCompleted {
		switch {
		case end.Reason == agent.ReasonAborted:
			err = errors.New("interrupted")
		case err == nil:
			err = fmt.Errorf("the turn stopped after %d steps (%s)", end.Steps, end.Reason)
		}
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	return 0
}

// runInspect prints what a model would be sent: the tools or the prompt.
func runInspect(what string, args []string, stdout, stderr io.Writer) int {
	var f demoFlags
	if code, ok := parse(newFlags("demo "+what, stdout, &f, true), args, stdout, stderr); !ok {
		return code
	}
	d, closeDeployment, err := deploy(f.workspace, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	defer closeDeployment()
	if what == "prompt" {
		fmt.Fprintln(stdout, d.Prompt.Assemble())
		return 0
	}
	raw, err := deepseek.ToolsJSON(d.Tools.Definitions())
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	out.WriteByte('\n')
	if _, err := stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	return 0
}

// workspace returns the directory to work in, seeded with the sample
// project, and its cleanup (a temporary directory is removed).
func workspace(dir string) (string, func(), error) {
	cleanup := func() {}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "gordis-demo-*")
		if err != nil {
			return "", nil, err
		}
		dir, cleanup = tmp, func() { os.RemoveAll(tmp) }
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	if err := copySample(dir); err != nil {
		cleanup()
		return "", nil, err
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
func deploy(workspaceFlag string, stderr io.Writer) (*gordis.Deployment, func(), error) {
	dir, removeWorkspace, err := workspace(workspaceFlag)
	if err != nil {
		return nil, nil, err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	d, closeDeployment, err := gordis.Build(gordis.Options{Workspace: dir, Logger: logger})
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

// chooseModel picks DeepSeek when a key is set (and not --offline), else the
// scripted model in-process; it returns the mode line and the prompt to run.
func chooseModel(f demoFlags) (agent.Model, string, string, error) {
	cfg := deepseek.ConfigFromEnv(os.Getenv)
	if cfg.APIKey != "" && !f.offline && f.script == "" {
		m, err := deepseek.New(cfg)
		if err != nil {
			return nil, "", "", err
		}
		base := cfg.BaseURL
		if base == "" {
			base = deepseek.DefaultBaseURL
		}
		return m, fmt.Sprintf("DeepSeek (%s at %s)", m.Name(), base), f.prompt, nil
	}
	why := "no DEEPSEEK_API_KEY"
	if f.offline {
		why = "--offline"
	}
	var script []scripted.Step
	if f.script != "" {
		why = "--script " + f.script
		data, err := os.ReadFile(f.script)
		if err != nil {
			return nil, "", "", err
		}
		if err := json.Unmarshal(data, &script); err != nil || len(script) == 0 {
			return nil, "", "", fmt.Errorf("script %s: want a non-empty JSON array of steps (%v)", f.script, err)
		}
	}
	m, err := deepseek.New(deepseek.Config{
		APIKey:     "offline",
		BaseURL:    "http://scripted.invalid",
		Model:      "scripted",
		HTTPClient: &http.Client{Transport: inproc.Transport{Handler: scripted.New(script)}},
	})
	if err != nil {
		return nil, "", "", err
	}
	return m, "scripted model (" + why + "), served in-process behind the DeepSeek adapter", scripted.Prompt, nil
}
