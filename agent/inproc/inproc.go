// Package inproc serves HTTP requests with an http.Handler inside the
// process: no socket, no port. Responses stream through a pipe, so a handler
// that writes server-sent events is read incrementally, exactly as over TCP.
package inproc

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Transport is an http.RoundTripper that calls Handler directly.
type Transport struct {
	Handler http.Handler
}

var _ http.RoundTripper = Transport{}

// RoundTrip runs the handler in a goroutine and returns as soon as it has
// written its header (or its first byte, or returned). The request's context
// cancels both the wait and the body.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	w := &writer{header: make(http.Header), pipe: pw, ready: make(chan struct{})}
	ctx := req.Context()
	stop := context.AfterFunc(ctx, func() { pw.CloseWithError(context.Cause(ctx)) })
	go func() {
		defer stop()
		if req.Body != nil {
			defer req.Body.Close() // a RoundTripper closes the request body
		}
		defer func() {
			w.writeHeader(http.StatusOK) // a handler that wrote nothing answers 200
			// A handler that returned because the request was cancelled must
			// not look like a complete body: nil cause means a clean EOF.
			pw.CloseWithError(context.Cause(ctx))
		}()
		t.Handler.ServeHTTP(w, req)
	}()
	select {
	case <-w.ready:
	case <-ctx.Done():
		pr.CloseWithError(ctx.Err())
		return nil, context.Cause(ctx)
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          pr,
		ContentLength: -1,
		Request:       req,
	}, nil
}

// writer is the handler's side: the header is frozen and handed over on the
// first WriteHeader or Write.
type writer struct {
	header http.Header
	sent   http.Header
	pipe   *io.PipeWriter
	status int
	once   sync.Once
	ready  chan struct{}
}

var _ http.Flusher = (*writer)(nil)

func (w *writer) Header() http.Header { return w.header }

func (w *writer) WriteHeader(status int) { w.writeHeader(status) }

func (w *writer) writeHeader(status int) {
	w.once.Do(func() {
		w.status = status
		w.sent = w.header.Clone()
		close(w.ready)
	})
}

func (w *writer) Write(p []byte) (int, error) {
	w.writeHeader(http.StatusOK)
	return w.pipe.Write(p)
}

// Flush is a no-op: the pipe is unbuffered, every Write is already delivered.
func (w *writer) Flush() {}
