package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/plugins/toolfs"
	"github.com/gordis-run/gordis/plugins/toolfs/diffcard"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// transcript prints the agent's events as they happen. It listens
// synchronously, so lines come out in the order the loop emits them, and
// its state needs no lock: the loop emits from one goroutine.
type transcript struct {
	w         io.Writer
	workspace string

	// A streamed message is printed piece by piece: open is 'r' or 't'
	// while a reasoning or text line is being written; trailing newlines
	// wait in pendingNL until more text proves they are not the end.
	streamed  bool
	open      byte
	pendingNL int
}

func newTranscript(w io.Writer, workspace string) *transcript {
	return &transcript{w: w, workspace: workspace}
}

func (t *transcript) listen(rt *runtime.Context) error {
	_, err1 := agent.TurnStartEvent.On(rt, func(e agent.TurnStart) error {
		fmt.Fprintf(t.w, "turn %d ▶ user: %s\n", e.Turn, e.Prompt)
		return nil
	})
	_, err5 := agent.StepStartEvent.On(rt, func(agent.StepStart) error {
		t.streamed = false
		return nil
	})
	_, err6 := agent.AssistantDeltaEvent.On(rt, func(e agent.AssistantDelta) error {
		t.streamed = true
		t.piece(e.Step, 'r', "∴", e.Reasoning)
		t.piece(e.Step, 't', "◀", e.Text)
		return nil
	})
	_, err2 := agent.AssistantMessageEvent.On(rt, func(e agent.AssistantMessage) error {
		t.closeLine()
		if r := e.Message.Reasoning; r != nil && *r != "" && !t.streamed {
			fmt.Fprintf(t.w, "  step %d ∴ %s\n", e.Step, clip(firstLine(*r), 100))
		}
		if e.Message.Text != "" && !t.streamed {
			fmt.Fprintf(t.w, "  step %d ◀ %s\n", e.Step, indented(strings.TrimSpace(e.Message.Text)))
		}
		if e.Finish == agent.FinishLength {
			fmt.Fprintf(t.w, "  step %d ✗ the reply hit the model's output limit\n", e.Step)
		}
		return nil
	})
	_, err3 := agent.ToolCallEvent.On(rt, func(e agent.ToolCallStart) error {
		fmt.Fprintf(t.w, "  step %d → %s %s\n", e.Step, e.Call.Tool, clip(string(e.Call.Args), 200))
		return nil
	})
	_, err4 := agent.ToolResultEvent.On(rt, func(e agent.ToolCallEnd) error {
		t.result(e.Result)
		return nil
	})
	return joinErrs(err1, err2, err3, err4, err5, err6)
}

// piece prints a streamed piece of reasoning (kind 'r') or text ('t'),
// opening a new line when the kind changes.
func (t *transcript) piece(step int, kind byte, mark, s string) {
	if s == "" {
		return
	}
	if t.open != kind {
		t.closeLine()
		if s = strings.TrimLeft(s, " \n"); s == "" {
			return
		}
		fmt.Fprintf(t.w, "  step %d %s ", step, mark)
		t.open = kind
	}
	body := strings.TrimRight(s, "\n")
	if body == "" {
		t.pendingNL += len(s)
		return
	}
	fmt.Fprint(t.w, indented(strings.Repeat("\n", t.pendingNL)+body))
	t.pendingNL = len(s) - len(body)
}

// indented indents every non-empty line after the first, so continuation
// lines sit under the text of the first and blank lines stay blank.
func indented(s string) string {
	lines := strings.Split(s, "\n")
	for i := 1; i < len(lines); i++ {
		if lines[i] != "" {
			lines[i] = indent + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// closeLine ends a streamed line.
func (t *transcript) closeLine() {
	if t.open != 0 {
		fmt.Fprintln(t.w)
		t.open, t.pendingNL = 0, 0
	}
}

const indent = "           "

// result prints a short form of a tool result, and a diff for a change.
func (t *transcript) result(r *registry.Result) {
	if r.IsError {
		code := ""
		if r.Error != nil && r.Error.Code != "" {
			code = r.Error.Code + ": "
		}
		fmt.Fprintf(t.w, "%s✗ %s%s\n", indent, code, strings.TrimPrefix(firstLine(r.Text), "Error: "))
		return
	}
	switch v := r.Value.(type) {
	case *toolfs.ListResult:
		c := v.Counts
		other := ""
		if c.Other > 0 {
			other = fmt.Sprintf(", %d other", c.Other)
		}
		fmt.Fprintf(t.w, "%s✓ %s: %d entries (%d directories, %d files%s)\n", indent, t.rel(v.Path), v.TotalEntries, c.Directories, c.Files, other)
	case *toolfs.ReadResult:
		if len(v.Lines) == 0 {
			fmt.Fprintf(t.w, "%s✓ %s: no lines (%d in all)\n", indent, t.rel(v.Path), v.TotalLines)
			break
		}
		fmt.Fprintf(t.w, "%s✓ %s: lines %d-%d of %d\n", indent, t.rel(v.Path), v.Lines[0].Number, v.Lines[len(v.Lines)-1].Number, v.TotalLines)
	case *toolfs.WriteResult:
		fmt.Fprintf(t.w, "%s✓ %s %s\n", indent, v.Operation, t.rel(v.Path))
		c := diffcard.Change{Name: t.rel(v.Path), After: v.After, Omitted: v.Omitted}
		if v.Before != nil {
			c.Before = *v.Before
		}
		t.card(c)
	case *toolfs.EditResult:
		fmt.Fprintf(t.w, "%s✓ edited %s\n", indent, t.rel(v.Path))
		t.card(diffcard.Change{Name: t.rel(v.Path), Before: v.Before, After: v.After, Omitted: v.Omitted})
	default:
		fmt.Fprintf(t.w, "%s✓ %s\n", indent, clip(firstLine(r.Text), 100))
	}
}

// card prints the diff card of a change, indented under its result. A
// result whose file was too large to keep (Omitted) gets a card saying so.
func (t *transcript) card(c diffcard.Change) {
	for _, line := range strings.SplitAfter(diffcard.Render(c), "\n") {
		if line != "" {
			fmt.Fprint(t.w, indent, "  ", line)
		}
	}
}

// summary closes the transcript with the outcome, time and token usage.
func (t *transcript) summary(end agent.TurnEnd, elapsed time.Duration) {
	t.closeLine() // a step that failed mid-stream
	steps := "steps"
	if end.Steps == 1 {
		steps = "step"
	}
	fmt.Fprintf(t.w, "turn %d ■ %s: %d %s in %s, tokens %s\n", end.Turn, end.Reason, end.Steps, steps, elapsed.Round(time.Millisecond), end.Usage)
}

// rel shows workspace paths relative to it.
func (t *transcript) rel(path string) string {
	if r, err := filepath.Rel(t.workspace, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// clip keeps the first n characters of s, and says when there were more.
// It walks only those: s may be a write's whole content.
func clip(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i] + "…"
		}
		n--
	}
	return s
}

func joinErrs(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
