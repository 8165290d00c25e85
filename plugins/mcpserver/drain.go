package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// drain is the state of a server's HTTP endpoints on the way out: the
// requests that carry calls in flight, and whether new ones are refused.
type drain struct {
	mu       sync.Mutex
	draining bool
	active   int           // POST requests admitted and not yet answered
	idle     chan struct{} // closed once draining with nothing active
}

// enter admits a POST request unless the server is draining.
func (d *drain) enter() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining {
		return false
	}
	d.active++
	return true
}

func (d *drain) leave() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.active--; d.draining && d.active == 0 {
		close(d.idle)
	}
}

// start refuses new requests from now on; the channel closes when the
// admitted ones have been answered.
func (d *drain) start() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.draining {
		d.draining = true
		d.idle = make(chan struct{})
		if d.active == 0 {
			close(d.idle)
		}
	}
	return d.idle
}

func (d *drain) isDraining() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.draining
}

// drainable counts the POST requests that next answers, and refuses new
// ones once the server drains: a new session with 503, so that a proxy or
// the client opens it on another replica, and a request of an open session
// with 404, the status on which the MCP specification has a client start a
// new session. GET (the event stream) and DELETE pass: they start no call.
func (s *Server) drainable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		if !s.drain.enter() {
			if r.Header.Get("Mcp-Session-Id") == "" {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "the server is shutting down: open the session elsewhere", http.StatusServiceUnavailable)
				return
			}
			http.Error(w, "session not found: the server is shutting down", http.StatusNotFound)
			return
		}
		defer s.drain.leave()
		next.ServeHTTP(w, r)
	})
}

// ErrDrainCut is the error of a Drain that ran out of time with calls in
// flight.
var ErrDrainCut = errors.New("mcpserver: the drain ran out of time with calls in flight")

// Drain stops taking work over HTTP and waits, until ctx is done, for the
// calls in flight to be answered. From its start, /readyz answers 503, a
// request that would open a session gets 503 and a request of an open
// session 404, on which clients start a new session, elsewhere. A drain cut
// short by ctx cancels the calls still in flight and returns ErrDrainCut.
//
// The sessions stay open, and so do their event streams, which never end
// by themselves: closing them at once could beat the last answers to their
// clients, and fail those calls there. The host gives them a moment, then
// stops its http.Server.
func (s *Server) Drain(ctx context.Context) error {
	select {
	case <-s.drain.start():
		return nil
	case <-ctx.Done():
		err := fmt.Errorf("%w: %w", ErrDrainCut, context.Cause(ctx))
		s.cutAll(err)
		return err
	}
}
