package deepseek

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/gordis-run/gordis/agent"
)

// accumulator assembles one assistant message from stream chunks. It is
// ours, not the client's: that one adds up usage reported twice, ignores
// reasoning_content and drops chunks with a different id.
type accumulator struct {
	reasoning    strings.Builder
	sawReasoning bool
	text         strings.Builder
	calls        []*partialCall // by tool-call index
	finish       string
	usage        *openai.CompletionUsage // the latest one reported
	onDelta      func(agent.Delta)       // optional
}

type partialCall struct {
	id, name string
	args     strings.Builder
}

// maxToolCalls bounds the tool-call index a chunk may name.
const maxToolCalls = 1024

func (a *accumulator) add(ch openai.ChatCompletionChunk) error {
	if ch.JSON.Usage.Valid() {
		u := ch.Usage
		a.usage = &u
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue
		}
		d := c.Delta
		r, ok := extraString(d.JSON.ExtraFields, "reasoning_content")
		if ok {
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
			for int(tc.Index) >= len(a.calls) {
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
func mapUsage(u *openai.CompletionUsage) agent.Usage {
	hit := u.PromptTokensDetails.CachedTokens
	if hit == 0 {
		hit = extraInt(u.JSON.ExtraFields, "prompt_cache_hit_tokens")
	}
	return agent.Usage{
		Input:     u.PromptTokens - hit,
		CacheRead: hit,
		Output:    u.CompletionTokens,
		Reasoning: u.CompletionTokensDetails.ReasoningTokens,
	}
}

// extraString reads a string field the client does not know. Its Valid()
// is always false for extra fields, so test the raw text instead.
func extraString(fields map[string]respjson.Field, key string) (string, bool) {
	f, ok := fields[key]
	if !ok || f.Raw() == "" || f.Raw() == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal([]byte(f.Raw()), &s) != nil {
		return "", false
	}
	return s, true
}

func extraInt(fields map[string]respjson.Field, key string) int64 {
	var n int64
	if f, ok := fields[key]; ok {
		json.Unmarshal([]byte(f.Raw()), &n)
	}
	return n
}

// doneWatcher notices "data: [DONE]" in the response body. The client's
// stream reports a clean EOF and [DONE] alike; only the latter means the
// answer is complete.
type doneWatcher struct {
	done atomic.Bool
}

var doneMarker = []byte("data: [DONE]")

func (w *doneWatcher) seen() bool { return w.done.Load() }

func (w *doneWatcher) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	resp, err := next(req)
	if err == nil && resp.StatusCode < 300 {
		resp.Body = &doneReader{ReadCloser: resp.Body, w: w}
	}
	return resp, err
}

type doneReader struct {
	io.ReadCloser
	w    *doneWatcher
	tail []byte // the last len(doneMarker)-1 bytes, for a marker split across reads
}

func (r *doneReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if n > 0 && !r.w.done.Load() {
		buf := append(r.tail, p[:n]...)
		if bytes.Contains(buf, doneMarker) {
			r.w.done.Store(true)
		}
		keep := min(len(buf), len(doneMarker)-1)
		r.tail = append(r.tail[:0], buf[len(buf)-keep:]...)
	}
	return n, err
}
