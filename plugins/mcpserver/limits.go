package mcpserver

import (
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CodeOverLimit is the JSON-RPC error code of a call refused by a limit
// (Config.MaxCallsPerSession, Config.CallsPerSecond): the first code of the
// range JSON-RPC 2.0 leaves to servers. Only that call is refused; the
// session and every other client go on.
const CodeOverLimit = -32000

// overLimit is the error of a call refused by a limit.
func overLimit(format string, args ...any) error {
	return &jsonrpc.Error{Code: CodeOverLimit, Message: fmt.Sprintf(format, args...)}
}

// slots bounds the calls a session runs at once; a nil slots has no bound.
type slots chan struct{}

func (c slots) acquire() (release func(), err error) {
	if c == nil {
		return func() {}, nil
	}
	select {
	case c <- struct{}{}:
		return func() { <-c }, nil
	default:
		return nil, overLimit("too many calls in flight in this session (the limit is %d)", cap(c))
	}
}

// rates is a token bucket per bearer token: each holds up to one second of
// calls and refills at perSecond. A server without authentication has one
// bucket, under the empty name. perSecond 0 means no bound.
type rates struct {
	perSecond float64
	now       func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket // by the token's user ID; one per configured token
}

type bucket struct {
	tokens float64
	last   time.Time
}

func (r *rates) allow(user string) error {
	if r.perSecond <= 0 {
		return nil
	}
	now := r.now()
	burst := max(r.perSecond, 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.buckets[user]
	if !ok {
		b = &bucket{tokens: burst, last: now}
		r.buckets[user] = b
	}
	b.tokens = min(burst, b.tokens+now.Sub(b.last).Seconds()*r.perSecond)
	b.last = now
	if b.tokens < 1 {
		return overLimit("too many calls: over %g per second for this token", r.perSecond)
	}
	b.tokens--
	return nil
}

// userOf names the bearer token a call came with ("" without one).
func userOf(req *mcp.CallToolRequest) string {
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		return extra.TokenInfo.UserID
	}
	return ""
}
