package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// request is the part of a chat-completions body the server checks.
type request struct {
	Model         string          `json:"model"`
	Messages      []message       `json:"messages"`
	Tools         []tool          `json:"tools"`
	ToolChoice    json.RawMessage `json:"tool_choice"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type message struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	ToolCalls        []toolCall      `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type tool struct {
	Type     string `json:"type"`
	Function struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// check validates req as DeepSeek would (and a little stricter, where the
// rule catches a loop bug) and returns the script phase it asks for.
func (h *Handler) check(req *request) (int, error) {
	if req.Model == "" {
		return 0, violation("model", "must be set")
	}
	if len(req.Messages) == 0 {
		return 0, violation("messages", "must not be empty")
	}
	if req.Stream && (req.StreamOptions == nil || !req.StreamOptions.IncludeUsage) {
		return 0, violation("stream_options", "a streaming request must set include_usage")
	}
	declared := map[string]bool{}
	for i, t := range req.Tools {
		name := t.Function.Name
		switch {
		case t.Type != "function":
			return 0, violation("tools", "tools[%d].type is %q, want \"function\"", i, t.Type)
		case !toolName.MatchString(name):
			return 0, violation("tools", "tools[%d].function.name %q is not a valid name", i, name)
		case declared[name]:
			return 0, violation("tools", "duplicate function name %q", name)
		}
		var schema struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(t.Function.Parameters, &schema) != nil || schema.Type != "object" {
			return 0, violation("tools", "%s: parameters must be a JSON Schema object with \"type\":\"object\"", name)
		}
		declared[name] = true
	}
	if err := checkToolChoice(req.ToolChoice, declared); err != nil {
		return 0, err
	}
	if err := checkMessages(req.Messages, declared); err != nil {
		return 0, err
	}

	phase, lastUser := 0, -1
	for i, m := range req.Messages {
		if m.Role == "user" {
			phase, lastUser = 0, i
		} else if m.Role == "assistant" {
			phase++
		}
	}
	if lastUser < 0 {
		return 0, violation("messages", "no user message")
	}
	if phase >= len(h.Script) {
		return 0, violation("script", "phase %d requested, the script has %d steps", phase, len(h.Script))
	}
	step := h.Script[phase]
	if step.Expect != "" && !strings.Contains(toolText(req.Messages), step.Expect) {
		return 0, violation("script", "phase %d: the previous tool results do not contain %q", phase, step.Expect)
	}
	for _, c := range step.Calls {
		if !declared[c.Name] {
			return 0, violation("script", "phase %d calls %q, which the request does not declare", phase, c.Name)
		}
	}
	return phase, nil
}

func checkToolChoice(raw json.RawMessage, declared map[string]bool) error {
	if len(raw) == 0 {
		return nil
	}
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		if mode == "none" || mode == "auto" || mode == "required" {
			return nil
		}
		return violation("tool_choice", "unknown mode %q", mode)
	}
	var named struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &named) != nil || !declared[named.Function.Name] {
		return violation("tool_choice", "must name a declared function")
	}
	return nil
}

// checkMessages enforces roles, assistant content, tool-call shape, the
// pairing of every tool call with exactly one tool message right after it,
// and the thinking-mode reasoning passback.
func checkMessages(msgs []message, declared map[string]bool) error {
	seen := map[string]bool{}
	var pending []string // ids still owed a tool message, in order
	for i, m := range msgs {
		if len(pending) > 0 {
			if m.Role != "tool" {
				return violation("pairing", "messages[%d] is %q but tool call %s has no tool message", i, m.Role, pending[0])
			}
			if m.ToolCallID != pending[0] {
				return violation("pairing", "messages[%d].tool_call_id is %q, want %q", i, m.ToolCallID, pending[0])
			}
			if !isString(m.Content) {
				return violation("messages", "messages[%d].content must be a string", i)
			}
			pending = pending[1:]
			continue
		}
		switch m.Role {
		case "system", "user":
		case "tool":
			return violation("pairing", "messages[%d] is a tool message that answers no pending tool call", i)
		case "assistant":
			if len(m.Content) > 0 && !isString(m.Content) && string(m.Content) != "null" {
				return violation("messages", "messages[%d].content must be a string", i)
			}
			var text string
			json.Unmarshal(m.Content, &text)
			if text == "" && len(m.ToolCalls) == 0 {
				return violation("messages", "messages[%d]: content or tool_calls must be set", i)
			}
			if len(m.ToolCalls) > 0 && !isString(m.ReasoningContent) {
				return violation("reasoning", "messages[%d]: the reasoning_content in the thinking mode must be passed back to the API", i)
			}
			for j, c := range m.ToolCalls {
				where := fmt.Sprintf("messages[%d].tool_calls[%d]", i, j)
				switch {
				case c.Type != "function":
					return violation("tool_calls", "%s.type is %q, want \"function\"", where, c.Type)
				case c.ID == "" || seen[c.ID]:
					return violation("tool_calls", "%s.id %q is empty or not unique", where, c.ID)
				case !declared[c.Function.Name]:
					return violation("tool_calls", "%s calls %q, which is not a declared tool", where, c.Function.Name)
				case !isString(c.Function.Arguments):
					return violation("tool_calls", "%s.function.arguments must be a JSON string", where)
				}
				var args string
				json.Unmarshal(c.Function.Arguments, &args)
				if !json.Valid([]byte(args)) {
					return violation("tool_calls", "%s.function.arguments is not valid JSON", where)
				}
				seen[c.ID] = true
				pending = append(pending, c.ID)
			}
		default:
			return violation("messages", "messages[%d].role %q is not one of system, user, assistant, tool", i, m.Role)
		}
	}
	if len(pending) > 0 {
		return violation("pairing", "tool call %s has no tool message", pending[0])
	}
	return nil
}

func isString(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '"'
}

// completion is one reply, encodable streamed or whole.
type completion struct {
	id, model string
	finishAs  string // overrides finish()
	reasoning string
	text      string
	calls     []wireCall
	usage     usage
}

type wireCall struct {
	ID, Name, Args string
}

type usage struct {
	PromptTokens          int64 `json:"prompt_tokens"`
	CompletionTokens      int64 `json:"completion_tokens"`
	TotalTokens           int64 `json:"total_tokens"`
	PromptCacheHitTokens  int64 `json:"prompt_cache_hit_tokens"`
	PromptCacheMissTokens int64 `json:"prompt_cache_miss_tokens"`
	PromptTokensDetails   struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// complete builds the reply of phase with deterministic ids and a usage
// derived from byte lengths: the cached prefix is the conversation the
// previous phase already saw.
func (h *Handler) complete(phase int, req *request, bodyLen int) *completion {
	step := h.Script[phase]
	c := &completion{id: fmt.Sprintf("scripted-%d", phase), model: req.Model, finishAs: step.Finish, reasoning: step.Reasoning, text: step.Text}
	out := len(step.Reasoning) + len(step.Text)
	for i, sc := range step.Calls {
		args := string(sc.Args)
		if len(sc.Args) == 0 {
			args = "{}"
		}
		c.calls = append(c.calls, wireCall{ID: fmt.Sprintf("call_%d_%d", phase, i), Name: sc.Name, Args: args})
		out += len(sc.Name) + len(args)
	}
	u := &c.usage
	u.PromptTokens = int64(bodyLen / 4)
	if phase > 0 {
		prev := len(req.Messages) - 1
		for req.Messages[prev].Role != "assistant" {
			prev--
		}
		seen, _ := json.Marshal(req.Messages[:prev])
		u.PromptCacheHitTokens = min(int64(len(seen)/4), u.PromptTokens)
	}
	u.PromptCacheMissTokens = u.PromptTokens - u.PromptCacheHitTokens
	u.PromptTokensDetails.CachedTokens = u.PromptCacheHitTokens
	u.CompletionTokensDetails.ReasoningTokens = int64(len(step.Reasoning) / 4)
	u.CompletionTokens = int64(out/4) + 1
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return c
}

func (c *completion) finish() string {
	if c.finishAs != "" {
		return c.finishAs
	}
	if len(c.calls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// message is the non-streaming chat.completion body.
func (c *completion) message() any {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	msg := struct {
		Role             string `json:"role"`
		Content          string `json:"content"`
		ReasoningContent string `json:"reasoning_content"`
		ToolCalls        []call `json:"tool_calls,omitempty"`
	}{Role: "assistant", Content: c.text, ReasoningContent: c.reasoning}
	for _, wc := range c.calls {
		msg.ToolCalls = append(msg.ToolCalls, call{ID: wc.ID, Type: "function", Function: fn{wc.Name, wc.Args}})
	}
	return map[string]any{
		"id": c.id, "object": "chat.completion", "created": 0, "model": c.model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": c.finish(), "message": msg}},
		"usage":   c.usage,
	}
}

type chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *usage        `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Role             string      `json:"role,omitempty"`
	Content          *string     `json:"content,omitempty"`
	ReasoningContent *string     `json:"reasoning_content,omitempty"`
	ToolCalls        []deltaCall `json:"tool_calls,omitempty"`
}

type deltaCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chunks encodes c as server-sent events the way DeepSeek streams: an empty
// reasoning delta first, then the reasoning, then text or tool calls whose
// argument text arrives in two fragments (fragments of parallel calls
// interleave, and only the first fragment of a call names it), then the
// finish chunk and a trailing usage-only chunk (both with usage when asked),
// then [DONE]. finishAt is the index of the finish chunk.
func (c *completion) chunks(includeUsage bool) (events [][]byte, finishAt int) {
	emit := func(d delta, finish *string, u *usage) {
		ch := chunk{ID: c.id, Object: "chat.completion.chunk", Model: c.model, Choices: []chunkChoice{{Delta: d, FinishReason: finish}}, Usage: u}
		if d.Role == "" && finish == nil && d.Content == nil && d.ReasoningContent == nil && d.ToolCalls == nil {
			ch.Choices = []chunkChoice{}
		}
		b, _ := json.Marshal(ch)
		events = append(events, fmt.Appendf(nil, "data: %s\n\n", b))
	}
	empty := ""
	emit(delta{Role: "assistant", ReasoningContent: &empty}, nil, nil)
	if c.reasoning != "" {
		emit(delta{ReasoningContent: &c.reasoning}, nil, nil)
	}
	if c.text != "" {
		for _, part := range halves(c.text) {
			emit(delta{Content: &part}, nil, nil)
		}
	}
	for i, wc := range c.calls {
		var d deltaCall
		d.Index, d.ID, d.Type, d.Function.Name = i, wc.ID, "function", wc.Name
		emit(delta{ToolCalls: []deltaCall{d}}, nil, nil)
	}
	for half := range 2 {
		for i, wc := range c.calls {
			var d deltaCall
			d.Index, d.Function.Arguments = i, halves(wc.Args)[half]
			emit(delta{ToolCalls: []deltaCall{d}}, nil, nil)
		}
	}
	var u *usage
	if includeUsage {
		u = &c.usage
	}
	finish := c.finish()
	finishAt = len(events)
	emit(delta{Content: &empty}, &finish, u)
	if includeUsage {
		emit(delta{}, nil, u)
	}
	return append(events, []byte("data: [DONE]\n\n")), finishAt
}

// halves splits s at a rune boundary near its middle.
func halves(s string) [2]string {
	mid := len(s) / 2
	for mid > 0 && !utf8.RuneStart(s[mid]) {
		mid--
	}
	return [2]string{s[:mid], s[mid:]}
}
