package deepseek

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gordis-run/gordis/agent"
)

// accumulator assembles one assistant message from stream chunks. Usage is
// reported twice by DeepSeek (with the finish chunk and alone after it): the
// latest one counts, they are not added up.
type accumulator struct {
	reasoning    strings.Builder
	sawReasoning bool
	text         strings.Builder
	calls        []*partialCall // by tool-call index
	finish       string
	usage        *usage            // the latest one reported
	onDelta      func(agent.Delta) // optional
}

type partialCall struct {
	id, name string
	args     strings.Builder
}

// maxToolCalls bounds the tool-call index a chunk may name.
const maxToolCalls = 1024

func (a *accumulator) add(ch *chunk) error {
	if ch.Usage != nil {
		a.usage = ch.Usage
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue
		}
		d := c.Delta
		var r string
		if d.ReasoningContent != nil {
			r = *d.ReasoningContent
			a.reasoning.WriteString(r)
			a.sawReasoning = true
		}
		a.text.WriteString(d.Content)
		if a.onDelta != nil && (r != "" || d.Content != "") {
			a.onDelta(agent.Delta{Reasoning: r, Text: d.Content})
		}
		for _, tc := range d.ToolCalls {
			if tc.Index < 0 || tc.Index >= maxToolCalls {
				return &agent.ModelError{Code: agent.CodeMalformed, Message: fmt.Sprintf("tool call index %d out of range", tc.Index)}
			}
			for tc.Index >= len(a.calls) {
				a.calls = append(a.calls, &partialCall{})
			}
			p := a.calls[tc.Index]
			if tc.ID != "" {
				p.id = tc.ID
			}
			if tc.Function.Name != "" {
				p.name = tc.Function.Name
			}
			p.args.WriteString(tc.Function.Arguments)
		}
		if c.FinishReason != "" {
			a.finish = c.FinishReason
		}
	}
	return nil
}

func (a *accumulator) response() (*agent.Response, error) {
	msg := agent.Message{Role: agent.RoleAssistant, Text: a.text.String()}
	if a.sawReasoning {
		r := a.reasoning.String()
		msg.Reasoning = &r
	}
	for i, p := range a.calls {
		if p.id == "" || p.name == "" {
			return nil, &agent.ModelError{Code: agent.CodeMalformed, Message: fmt.Sprintf("tool call %d has no id or no name", i)}
		}
		msg.ToolCalls = append(msg.ToolCalls, agent.ToolCall{ID: p.id, Name: p.name, Arguments: p.args.String()})
	}
	resp := &agent.Response{Message: msg}
	switch a.finish {
	case "stop":
		resp.Finish = agent.FinishStop
	case "tool_calls":
		resp.Finish = agent.FinishToolCalls
	case "length":
		resp.Finish = agent.FinishLength
	default:
		return nil, &agent.ModelError{Code: agent.CodeFinish, Message: fmt.Sprintf("the model stopped with finish reason %q", a.finish)}
	}
	if resp.Finish == agent.FinishStop && msg.Text == "" && len(msg.ToolCalls) == 0 {
		return nil, &agent.ModelError{Code: agent.CodeEmptyResponse, Message: "the model returned an empty message"}
	}
	if a.usage != nil {
		resp.Usage = mapUsage(a.usage)
	}
	return resp, nil
}

// mapUsage makes the counts disjoint: Input excludes the cache hits.
func mapUsage(u *usage) agent.Usage {
	hit := u.PromptTokensDetails.CachedTokens
	if hit == 0 {
		hit = u.PromptCacheHitTokens
	}
	return agent.Usage{
		Input:     u.PromptTokens - hit,
		CacheRead: hit,
		Output:    u.CompletionTokens,
		Reasoning: u.CompletionTokensDetails.ReasoningTokens,
	}
}

// maxEvent bounds one server-sent event's data, so a server that never
// ends a line cannot grow memory until the timeout.
const maxEvent = 16 << 20

var errEventTooLarge = fmt.Errorf("an event is larger than %d MiB", maxEvent>>20)

// sseReader reads the data of server-sent events. Comments (DeepSeek's
// ": keep-alive" while a request is queued) and fields other than data are
// skipped; an event's data lines are joined with newlines. Lines end with
// LF or CRLF, as chat-completions servers send them; a lone CR, which the
// SSE format also allows, is not a line end here.
type sseReader struct {
	r    *bufio.Reader
	line []byte
	data []byte
}

func newSSEReader(r io.Reader) *sseReader { return &sseReader{r: bufio.NewReader(r)} }

// next returns the data of the next event, valid until the following call,
// or io.EOF at the end of the body. An event still open at the end counts
// if its last line was complete; a line cut short is dropped.
func (s *sseReader) next() ([]byte, error) {
	s.data = s.data[:0]
	open := false
	for {
		line, err := s.readLine()
		if err == io.EOF && open {
			return s.data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			if open {
				return s.data, nil
			}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue
		}
		if open {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, bytes.TrimPrefix(value, []byte(" "))...)
		open = true
		if len(s.data) > maxEvent {
			return nil, errEventTooLarge
		}
	}
}

// readLine returns the next complete line without its end of line.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		part, err := s.r.ReadSlice('\n')
		s.line = append(s.line, part...)
		switch {
		case len(s.line) > maxEvent:
			return nil, errEventTooLarge
		case err == nil:
			return bytes.TrimSuffix(bytes.TrimSuffix(s.line, []byte("\n")), []byte("\r")), nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, err
		}
	}
}
