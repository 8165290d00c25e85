package inproc

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestTransportStreamsBodyAndHeader(t *testing.T) {
	next := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Echo", string(body))
		w.WriteHeader(http.StatusTeapot)
		w.Write([]byte("first;"))
		<-next // the client must see "first;" before the handler goes on
		w.Write([]byte("second"))
	})
	client := &http.Client{Transport: Transport{Handler: h}}
	resp, err := client.Post("http://inproc.invalid/x", "text/plain", strings.NewReader("ping"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot || resp.Status != "418 I'm a teapot" || resp.Header.Get("X-Echo") != "ping" {
		t.Fatalf("status %d %q, header %q", resp.StatusCode, resp.Status, resp.Header.Get("X-Echo"))
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "first;" {
		t.Fatalf("first read %q, %v", buf, err)
	}
	close(next)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "second" {
		t.Fatalf("rest %q, %v", rest, err)
	}
}

func TestTransportEmptyHandlerIs200(t *testing.T) {
	client := &http.Client{Transport: Transport{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})}}
	resp, err := client.Get("http://inproc.invalid/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestTransportCancelUnblocksHeaderWaitAndBody(t *testing.T) {
	stall := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://inproc.invalid/", nil)
	if _, err := (Transport{Handler: stall}).RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("header wait: %v", err)
	}

	midBody := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("x"))
		<-r.Context().Done()
	})
	ctx2, cancel2 := context.WithCancel(context.Background())
	req2, _ := http.NewRequestWithContext(ctx2, http.MethodGet, "http://inproc.invalid/", nil)
	resp, err := (Transport{Handler: midBody}).RoundTrip(req2)
	if err != nil {
		t.Fatal(err)
	}
	one := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, one); err != nil {
		t.Fatal(err)
	}
	cancel2()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
		t.Fatalf("body after cancel: %v", err)
	}
}

// closeSpy records that the transport closed the request body, as the
// http.RoundTripper contract requires.
type closeSpy struct {
	io.Reader
	closed chan struct{}
}

func (c *closeSpy) Close() error { close(c.closed); return nil }

func TestTransportClosesRequestBody(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	body := &closeSpy{Reader: strings.NewReader("x"), closed: make(chan struct{})}
	req, _ := http.NewRequest("POST", "http://inproc.invalid/", body)
	resp, err := Transport{Handler: h}.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case <-body.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("request body never closed")
	}
}
