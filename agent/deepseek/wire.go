package deepseek

import (
	"encoding/json"

	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/registry"
)

// The chat-completions wire format, only the fields the agent sends or
// reads. Field order is the order on the wire.

type chatRequest struct {
	Model         string         `json:"model"`
	Messages      []message      `json:"messages"`
	Tools         []tool         `json:"tools,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// message is one request message. Content is always a string (some
// gateways reject null); ReasoningContent is set only on assistant messages
// with tool calls.
type message struct {
	Content          string     `json:"content"`
	ToolCalls        []toolCall `json:"tool_calls,omitempty"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
	Role             agent.Role `json:"role"`
	ReasoningContent *string    `json:"reasoning_content,omitempty"`
}

type toolCall struct {
	ID       string       `json:"id"`
	Function functionCall `json:"function"`
	Type     string       `json:"type"`
}

type functionCall struct {
	Arguments string `json:"arguments"`
	Name      string `json:"name"`
}

// tool declares a registry definition as a function tool; the definition's
// {name, description, parameters} goes out verbatim (schema key order kept).
type tool struct {
	Function registry.Definition `json:"function"`
	Type     string              `json:"type"`
}

// completion is a whole (non-streamed) reply.
type completion struct {
	Choices []struct {
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Content          string  `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			ToolCalls        []struct {
				ID       string       `json:"id"`
				Function functionCall `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
}

// chunk is one streamed event; Error is set when the server reports a
// failure in the stream instead of an HTTP status.
type chunk struct {
	Choices []struct {
		Index        int    `json:"index"`
		FinishReason string `json:"finish_reason"`
		Delta        struct {
			Content          string  `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int          `json:"index"`
				ID       string       `json:"id"`
				Function functionCall `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *usage       `json:"usage"`
	Error *errorDetail `json:"error"`
}

// usage carries both spellings of the cache hits: OpenAI's cached_tokens
// and DeepSeek's prompt_cache_hit_tokens.
type usage struct {
	PromptTokens         int64 `json:"prompt_tokens"`
	CompletionTokens     int64 `json:"completion_tokens"`
	PromptCacheHitTokens int64 `json:"prompt_cache_hit_tokens"`
	PromptTokensDetails  struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// errorDetail is the "error" object of an error body or event. Code is a
// string at DeepSeek and OpenAI, but other gateways send numbers.
type errorDetail struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// code is Code as text, "" when absent or null.
func (e *errorDetail) code() string {
	var s string
	if json.Unmarshal(e.Code, &s) == nil {
		return s
	}
	if len(e.Code) == 0 || string(e.Code) == "null" {
		return ""
	}
	return string(e.Code)
}

// messages serialises the conversation. A message with tool calls always
// carries reasoning_content, even "": DeepSeek's thinking mode answers 400
// without it.
func messages(req *agent.Request) []message {
	out := make([]message, 0, len(req.Messages)+1)
	if req.System != "" {
		out = append(out, message{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		msg := message{Role: m.Role, Content: m.Text, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: tc.ID, Type: "function", Function: functionCall{Name: tc.Name, Arguments: tc.Arguments}})
		}
		if len(m.ToolCalls) > 0 {
			msg.ReasoningContent = new(string)
			if m.Reasoning != nil {
				*msg.ReasoningContent = *m.Reasoning
			}
		}
		out = append(out, msg)
	}
	return out
}

func tools(defs []registry.Definition) []tool {
	out := make([]tool, len(defs))
	for i, d := range defs {
		out[i] = tool{Function: d, Type: "function"}
	}
	return out
}

// ToolsJSON is the "tools" array of a request, exactly as sent.
func ToolsJSON(defs []registry.Definition) ([]byte, error) {
	return json.Marshal(tools(defs))
}
