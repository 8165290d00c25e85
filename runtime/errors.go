package runtime

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
)

var (
	// ErrInactive: registering a listener, effect, service or plugin on a disposed context.
	ErrInactive = errors.New("runtime: cannot create effect on inactive context")
	// ErrInvalidPlugin: Plugin(nil) or a plugin without an apply.
	ErrInvalidPlugin = errors.New("runtime: invalid plugin")
	// ErrNextCalledTwice: a waterfall listener called next more than once.
	ErrNextCalledTwice = errors.New("runtime: next() called multiple times")

	// ErrNotInjected: Get of a service the context neither injects, provides
	// itself, inherits from an ancestor, nor sees on the root.
	ErrNotInjected = errors.New("runtime: service not injected")
	// ErrServiceUnavailable: the service is injected but not currently
	// provided to this context (its fiber is not loaded).
	ErrServiceUnavailable = errors.New("runtime: service unavailable")
	// ErrServiceConflict: a second provider for a service name that already has one.
	ErrServiceConflict = errors.New("runtime: service already provided")
	// ErrNotProvider: Set from a fiber that does not provide the service.
	ErrNotProvider = errors.New("runtime: not the service provider")
	// ErrServiceType: the service value does not have the handle's type.
	ErrServiceType = errors.New("runtime: service has another type")
)

// serviceError carries a readable message and one of the sentinel errors
// above, so callers can test it with errors.Is.
type serviceError struct {
	kind error
	msg  string
}

func (e *serviceError) Error() string { return e.msg }
func (e *serviceError) Unwrap() error { return e.kind }

func serviceErr(kind error, format string, args ...any) error {
	return &serviceError{kind: kind, msg: "runtime: " + fmt.Sprintf(format, args...)}
}

// ConfigError reports a config that a plugin's config type rejects. Err is a
// *schema.ValidationError naming every violation, or the decoding error.
type ConfigError struct {
	Plugin string
	Err    error
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("invalid config for plugin %q: %v", e.Plugin, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// NotActiveError is [Fiber.WaitActive]'s report of a fiber that did not
// become ACTIVE: it was disposed, or the wait's context ended first. For a
// PENDING fiber, Missing names the injected services that have no ACTIVE
// provider in its domain, in the order the plugin injects them.
type NotActiveError struct {
	Plugin  string
	State   State
	Missing []string
	Err     error // the context's cause (its error unless cancelled with one); nil for a disposed fiber
}

func (e *NotActiveError) Error() string {
	var b strings.Builder
	b.WriteString("runtime: plugin ")
	b.WriteString(strconv.Quote(e.Plugin))
	if e.State == Disposed {
		b.WriteString(" was disposed")
	} else {
		b.WriteString(" is still ")
		b.WriteString(e.State.String())
	}
	if len(e.Missing) > 0 {
		b.WriteString(", waiting for service")
		if len(e.Missing) > 1 {
			b.WriteString("s")
		}
		for i, name := range e.Missing {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(" ")
			b.WriteString(strconv.Quote(name))
		}
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the context's error, so errors.Is(err,
// context.DeadlineExceeded) holds for a wait that timed out.
func (e *NotActiveError) Unwrap() error { return e.Err }

// PanicError is a panic recovered from plugin, listener or observer code.
type PanicError struct {
	Value any    // the value passed to panic
	Stack []byte // the goroutine's stack where it panicked
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

func recovered(v any) error { return &PanicError{Value: v, Stack: debug.Stack()} }

// joinErr adds err to acc without allocating for the first error.
func joinErr(acc, err error) error {
	if acc == nil {
		return err
	}
	return errors.Join(acc, err)
}
