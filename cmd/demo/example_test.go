package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/examples/wordcount"
	"github.com/gordis-run/gordis/registry"
)

// A host that replays tool calls through a third-party plugin: the default
// deployment, the plugin plugged on its root, one registry call a line.
func Example_replayThroughAPlugin() {
	dir, _ := os.MkdirTemp("", "replay-example-*")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one two\nthree\n"), 0o644)
	calls := `{"tool": "count", "args": {"file_path": "a.txt"}}
{"tool": "count", "args": {"file_path": "missing.txt"}}`

	d, cleanup, err := gordis.Build(gordis.Options{Workspace: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()
	if f, err := d.Root.Plugin(wordcount.Plugin, nil); err != nil || f.Wait() != nil {
		log.Fatal("wordcount did not start")
	}
	session := agent.NewSession(d.Workspace)
	defer session.Close()
	for i, line := range strings.Split(calls, "\n") {
		var c struct {
			Tool string
			Args json.RawMessage
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			log.Fatal(err)
		}
		res := d.Tools.Execute(context.Background(), &registry.Call{ID: strconv.Itoa(i), Tool: c.Tool, Args: c.Args, Session: session})
		fmt.Println(strings.ReplaceAll(res.Text, d.Workspace, "$WS"))
	}
	// Output:
	// $WS/a.txt: 2 lines, 3 words, 14 bytes
	// Error: cannot read "$WS/missing.txt": not found
}
