package toolfs_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// A listener that never returns, on each event a file tool waits for, holds
// the call no longer than its 300 ms deadline: an undecided intent refuses
// the mutation as a cancelled call is refused, nothing is written; an
// abandoned observer leaves the change on disk and the registry reports the
// late success as it reports any; an abandoned tools/result listener
// leaves the result as it was. Every abandonment is logged with the event,
// the tool and the call, and every listener sees the call's context.
func TestListenersBoundedByDeadline(t *testing.T) {
	const deadline = 300 * time.Millisecond
	// block is a listener body that reports the context it was given, then
	// ignores it, as a buggy plugin would.
	type block func(ctx context.Context)
	tests := []struct {
		name   string
		event  string
		listen func(root *runtime.Context, b block) error
		tool   string
		args   string
		text   string // the result's exact text
		code   string // "" for a success
		disk   string // a.txt afterwards ("" = absent)
	}{
		{
			name: "write intent", event: "fs/write-intent",
			listen: func(root *runtime.Context, b block) error {
				_, err := fs.WriteIntentEvent.On(root, func(req fs.IntentRequest, _ runtime.Next[*fs.WriteIntent]) (*fs.WriteIntent, error) {
					b(req.Context())
					return nil, nil
				}, runtime.Prepend())
				return err
			},
			tool: "write", args: `{"file_path":"a.txt","content":"new"}`,
			text: "Error: write aborted", code: fs.CodeAborted, disk: "",
		},
		{
			name: "edit intent", event: "fs/edit-intent",
			listen: func(root *runtime.Context, b block) error {
				_, err := fs.EditIntentEvent.On(root, func(req fs.IntentRequest, _ runtime.Next[*fs.EditIntent]) (*fs.EditIntent, error) {
					b(req.Context())
					return nil, nil
				}, runtime.Prepend())
				return err
			},
			tool: "edit", args: `{"file_path":"a.txt","old_string":"old","new_string":"new"}`,
			text: "Error: edit aborted", code: fs.CodeAborted, disk: "old",
		},
		{
			name: "observed", event: "fs/observed",
			listen: func(root *runtime.Context, b block) error {
				_, err := fs.ObservedEvent.On(root, func(o fs.Observation) error {
					b(o.Context())
					return nil
				})
				return err
			},
			tool: "write", args: `{"file_path":"a.txt","content":"new"}`,
			text: "Error: tool call aborted", code: registry.CodeAborted, disk: "new",
		},
		{
			name: "result", event: "tools/result",
			listen: func(root *runtime.Context, b block) error {
				_, err := registry.ResultEvent.On(root, func(res *registry.Result) error {
					b(res.Context())
					return nil
				})
				return err
			},
			tool: "write", args: `{"file_path":"a.txt","content":"new"}`,
			text: "<path>/a.txt</path>\n<type>file</type>\n<content>\nUpdated file\n</content>", disk: "new",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := runtimetest.NewLogs()
			e := setup(t, options{policy: true, logs: logs})
			release := make(chan struct{})
			t.Cleanup(func() { close(release) }) // before the root closes
			s := newSession(e.dir)
			if tt.name != "write intent" {
				// An observed file: the policy lets the session replace or edit it.
				e.write(t, "a.txt", "old")
				e.call(s, "read", args{"file_path": "a.txt"})
			}
			seen := make(chan context.Context, 1)
			if err := tt.listen(e.root, func(ctx context.Context) {
				seen <- ctx
				<-release
			}); err != nil {
				t.Fatal(err)
			}

			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			start := time.Now()
			returned := make(chan *registry.Result, 1)
			go func() {
				returned <- e.tools.Execute(ctx, &registry.Call{ID: "late", Tool: tt.tool, Args: json.RawMessage(tt.args), Session: s})
			}()
			var r *registry.Result
			select {
			case r = <-returned:
			case <-time.After(time.Second):
				t.Fatalf("the call is still running 1s after it started, with a %v deadline", deadline)
			}
			t.Logf("%s: returned after %v", tt.event, time.Since(start))

			want := strings.ReplaceAll(tt.text, "/a.txt", e.path("a.txt"))
			if tt.code == "" {
				wantText(t, r, want)
			} else {
				wantError(t, r, want, tt.code)
			}
			if got := <-seen; got != ctx {
				t.Errorf("the listener's Context() is %v, want the call's", got)
			}
			b, err := os.ReadFile(e.path("a.txt"))
			if got := string(b); got != tt.disk || (tt.disk == "") != os.IsNotExist(err) {
				t.Errorf("a.txt = %q (%v), want %q", got, err, tt.disk)
			}
			var warned []map[string]string
			for _, rec := range logs.Records() {
				if rec.Level == slog.LevelWarn && strings.HasPrefix(rec.Message, "listeners abandoned") {
					warned = append(warned, rec.Attrs)
				}
			}
			if len(warned) != 1 || warned[0]["event"] != tt.event || warned[0]["tool"] != tt.tool || warned[0]["call"] != "late" {
				t.Errorf("abandonments logged: %v, want one of %s by %s call late", warned, tt.event, tt.tool)
			}
		})
	}
}
