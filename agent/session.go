package agent

import (
	"encoding/json"
	"sync"

	"github.com/google/uuid"

	"github.com/gordis-run/gordis/registry"
)

// Session is the identity a conversation's tool calls carry: the policy
// owner, and the working directory relative paths resolve against.
type Session struct {
	id, cwd string
	done    chan struct{}
	once    sync.Once
}

var _ registry.Session = (*Session)(nil)

// NewSession starts a session rooted at cwd with a fresh random id.
func NewSession(cwd string) *Session {
	return &Session{id: uuid.NewString(), cwd: cwd, done: make(chan struct{})}
}

func (s *Session) ID() string            { return s.id }
func (s *Session) Cwd() string           { return s.cwd }
func (s *Session) Done() <-chan struct{} { return s.done }

// Close ends the session; state keyed by it may be dropped. Idempotent.
func (s *Session) Close() { s.once.Do(func() { close(s.done) }) }

// MarshalJSON shows the session in traces as its id and cwd.
func (s *Session) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID  string `json:"id"`
		Cwd string `json:"cwd"`
	}{s.id, s.cwd})
}
