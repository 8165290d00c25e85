// Package mcpevents declares the events of the MCP server that only the
// server knows of: sessions opening and closing, requests refused for their
// bearer token, and requests or calls refused by a limit.
//
// They live apart from package mcpserver so that an observer (the metrics
// plugin, an audit log) imports only this package and the runtime, not the
// MCP SDK: a host without an MCP server does not build the SDK to observe
// one that may be plugged. The server emits them on the context it was
// built on.
package mcpevents

import "github.com/gordis-run/gordis/runtime"

var (
	// SessionEvent fires when an MCP session is initialized (Open) and
	// again when it closes (emit).
	SessionEvent = runtime.NewEvent[Session]("mcp/session")
	// AuthFailureEvent fires for every request refused with 401 for a
	// missing or wrong bearer token (emit).
	AuthFailureEvent = runtime.NewEvent[AuthFailure]("mcp/auth-failure")
	// RefusalEvent fires for every request or call a limit refuses (emit).
	RefusalEvent = runtime.NewEvent[Refusal]("mcp/refusal")
)

// Session is an MCP session that opened or closed. ID is the transport's
// session ID ("" over stdio).
type Session struct {
	ID   string `json:"id"`
	Open bool   `json:"open"`
}

// AuthFailure is a request refused for its bearer token. Remote is the
// client's address; the token itself is never in the event.
type AuthFailure struct {
	Remote string `json:"remote"`
}

// Refusal is a request or call a limit refused.
type Refusal struct {
	Limit Limit `json:"limit"`
}

// Limit names one of the server's limits.
type Limit string

const (
	// LimitMessage: a message larger than the largest accepted (HTTP 413,
	// or a JSON-RPC error over stdio).
	LimitMessage Limit = "message"
	// LimitSessions: a new session beyond the open sessions' bound (503).
	LimitSessions Limit = "sessions"
	// LimitCalls: a call beyond the calls one session runs at once.
	LimitCalls Limit = "calls_in_flight"
	// LimitRate: a call beyond the calls per second of its token.
	LimitRate Limit = "rate"
)

// Limits are every Limit, in order, for observers that show each from zero.
var Limits = []Limit{LimitCalls, LimitMessage, LimitRate, LimitSessions}
