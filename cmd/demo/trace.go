package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/runtime"
)

// startTrace writes every observed event to path as JSON Lines. Observers
// run asynchronously, so each line carries its publication time. Call the
// returned close after the deployment's cleanup, which drains the observers.
func startTrace(d *gordis.Deployment, path string) (func() error, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	var mu sync.Mutex // the observer goroutine writes; close reads writeErr
	var writeErr error
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false) // tool texts are full of <path> tags
	err = d.Root.ObserveAll(func(n runtime.Note) {
		line := traceLine{Time: n.Time.UTC().Format(time.RFC3339Nano), Event: n.Event, Args: n.Args}
		mu.Lock()
		defer mu.Unlock()
		err := enc.Encode(line)
		if err != nil {
			// No JSON form (a func, a cycle...): keep the event, as text.
			line.Args, line.Text = nil, fmt.Sprintf("%+v", n.Args)
			err = enc.Encode(line)
		}
		if err != nil && writeErr == nil {
			writeErr = err
		}
	})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("trace: %w", err)
	}
	return func() error {
		mu.Lock()
		defer mu.Unlock()
		if err := f.Close(); writeErr == nil {
			writeErr = err
		}
		return writeErr
	}, nil
}

// traceLine is one JSON Lines record; Text replaces Args when the payload
// has no JSON form.
type traceLine struct {
	Time  string `json:"time"`
	Event string `json:"event"`
	Args  any    `json:"args,omitempty"`
	Text  string `json:"text,omitempty"`
}
