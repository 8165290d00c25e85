package gordis_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/registry"
)

// Build boots the default deployment in a workspace. A session's relative
// paths resolve against it, and the policy lets a session change only what
// it has seen: a file it wrote, or one it has read.
func ExampleBuild() {
	dir, _ := os.MkdirTemp("", "gordis-example")
	defer os.RemoveAll(dir)

	d, cleanup, err := gordis.Build(gordis.Options{Workspace: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cleanup()

	var names []string
	for _, def := range d.Tools.Definitions() {
		names = append(names, def.Name)
	}
	fmt.Println(strings.Join(names, " "))
	_ = os.WriteFile(filepath.Join(dir, "old.txt"), []byte("v1\n"), 0o644)

	session := agent.NewSession(d.Workspace)
	defer session.Close()
	run := func(tool, args string) {
		res := d.Tools.Execute(context.Background(), &registry.Call{ID: tool, Tool: tool, Args: []byte(args), Session: session})
		if res.IsError {
			fmt.Println(tool, "->", res.Error.Code)
		} else {
			fmt.Println(tool, "-> ok")
		}
	}
	run("write", `{"file_path": "notes.txt", "content": "draft\n"}`)
	run("edit", `{"file_path": "notes.txt", "old_string": "draft", "new_string": "final"}`) // it wrote it: seen
	run("edit", `{"file_path": "old.txt", "old_string": "v1", "new_string": "v2"}`)         // never read
	run("read", `{"file_path": "old.txt"}`)
	run("edit", `{"file_path": "old.txt", "old_string": "v1", "new_string": "v2"}`)
	// Output:
	// list read write edit glob grep
	// write -> ok
	// edit -> ok
	// edit -> FS_NOT_OBSERVED
	// read -> ok
	// edit -> ok
}
