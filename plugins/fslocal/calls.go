package fslocal

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/runtime"
)

// closeWait bounds how long [FS.Close] waits for the calls the provider is
// serving (a var for tests). A write of 64 MiB took 0.2 s on this
// project's disk, and Close with 8 of them in flight 1.8 s; a call still
// running after the bound (a walk or scan whose visitor does not return, a
// disk that stalls) meets closed handles.
var closeWait = 5 * time.Second

// ErrClosed is the cause of a call that the provider refused because Close
// had begun, or that lost its handles to a Close that stopped waiting for it.
// Such a call changed nothing. The error it returns also matches
// runtime.ErrServiceUnavailable, so the registry reports it as
// TOOL_UNAVAILABLE: the tool is back once the plugin is.
var ErrClosed = errors.New("the filesystem provider is closed")

// closedError is the failure of a call that met a closed provider, with the
// verb and the path it was about.
type closedError struct{ verb, path string }

func (e *closedError) Error() string {
	return "cannot " + e.verb + ` "` + fs.Clip(e.path) + `": ` + ErrClosed.Error()
}

func (e *closedError) Unwrap() []error { return []error{ErrClosed, runtime.ErrServiceUnavailable} }

// callGate counts the calls a provider is serving, so that Close can wait
// for them instead of closing the roots' handles under them, and refuses
// the calls that arrive once Close began. Entering and leaving are one
// atomic add each; no lock is held while a call runs.
type callGate struct {
	state   atomic.Int64  // calls being served, plus closing once Close began
	idle    chan struct{} // made before closing is set; closed once no call is left
	closed  sync.Once     // sets closing
	emptied sync.Once     // closes idle
}

// closing is the bit of callGate.state set when Close begins.
const closing = 1 << 62

// enter admits a call, or refuses it (ErrClosed) when Close began.
func (g *callGate) enter(verb, path string) error {
	if g.state.Add(1)&closing != 0 {
		g.leave()
		return &closedError{verb, path}
	}
	return nil
}

// done ends a call that enter admitted. A call that failed because the
// roots' handles were closed under it (Close stopped waiting) failed before
// it changed anything: after a write's rename nothing fails for that (the
// directory fsync uses the staging's own handle, and a failed stat for the
// new version gives the "missing:" version). *err is then the refusal
// enter would have given.
func (g *callGate) done(verb, path string, err *error) {
	if *err != nil && g.state.Load()&closing != 0 && (errors.Is(*err, os.ErrClosed) || errors.Is(*err, syscall.EBADF)) {
		*err = &closedError{verb, path}
	}
	g.leave()
}

func (g *callGate) leave() {
	if g.state.Add(-1) == closing {
		g.empty()
	}
}

func (g *callGate) empty() { g.emptied.Do(func() { close(g.idle) }) }

// close refuses the calls to come and waits, at most wait, until the calls
// being served have left; it returns how many had not.
func (g *callGate) close(wait time.Duration) int64 {
	g.closed.Do(func() {
		g.idle = make(chan struct{})
		if g.state.Or(closing) == 0 {
			g.empty()
		}
	})
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-g.idle:
		return 0
	case <-timer.C:
		return g.state.Load() &^ closing
	}
}
