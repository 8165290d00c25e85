package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/agent/deepseek"
	"github.com/gordis-run/gordis/agent/inproc"
	"github.com/gordis-run/gordis/agent/scripted"
)

// A host program runs the loop on the default deployment. Here the model is
// the scripted one, in-process; with a key it would be
// deepseek.New(deepseek.ConfigFromEnv(os.Getenv)).
func Example() {
	dir, _ := os.MkdirTemp("", "agent-example-*")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# Notes\nstatus: draft\n"), 0o644)

	d, cleanup, err := gordis.Build(gordis.Options{Workspace: dir})
	if err != nil {
		panic(err)
	}
	defer cleanup()
	model, err := deepseek.New(deepseek.Config{
		APIKey: "offline", BaseURL: "http://scripted.invalid",
		HTTPClient: &http.Client{Transport: inproc.Transport{Handler: scripted.New(nil)}},
	})
	if err != nil {
		panic(err)
	}
	agent.ToolCallEvent.On(d.Root, func(e agent.ToolCallStart) error {
		fmt.Println("→", e.Call.Tool, string(e.Call.Args))
		return nil
	})
	a, err := agent.New(d.Root, agent.Config{Model: model, Tools: d.Tools, Prompt: d.Prompt, Cwd: d.Workspace})
	if err != nil {
		panic(err)
	}
	defer a.Close()

	end, err := a.Run(context.Background(), scripted.Prompt)
	fmt.Println(end.Reason, end.Steps, end.Answer, err)
	// Output:
	// → list {"path": "."}
	// → grep {"pattern": "status: draft"}
	// → read {"file_path": "notes.md"}
	// → edit {"file_path": "notes.md", "old_string": "status: draft", "new_string": "status: reviewed"}
	// → read {"file_path": "notes.md"}
	// completed 6 Updated notes.md: status is now reviewed. <nil>
}
