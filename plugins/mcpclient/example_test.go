package mcpclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/plugins/mcpclient"
	"github.com/gordis-run/gordis/plugins/mcpserver"
	"github.com/gordis-run/gordis/registry"
)

// A gordis deployment imports the tools of another gordis served over MCP,
// here in memory, under the prefix "ext_".
func Example() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	// The external server: the default deployment, served over MCP.
	remote, closeRemote, err := gordis.Build(gordis.Options{Workspace: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer closeRemote()
	server, err := mcpserver.New(remote.Root, remote.Tools, remote.Prompt, mcpserver.Config{Cwd: remote.Workspace})
	if err != nil {
		log.Fatal(err)
	}

	// The importing side, with a transport per connection attempt.
	local, closeLocal, err := gordis.Build(gordis.Options{Workspace: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer closeLocal()
	client, err := local.Root.Plugin(mcpclient.New(mcpclient.Config{Prefix: "ext_"}, func() mcp.Transport {
		serverT, clientT := mcp.NewInMemoryTransports()
		if _, err := server.MCP().Connect(context.Background(), serverT, nil); err != nil {
			log.Print(err)
		}
		return clientT
	}), nil)
	if err == nil {
		err = client.Wait()
	}
	if err != nil {
		log.Fatal(err)
	}

	var names []string
	for _, def := range local.Tools.Definitions() {
		names = append(names, def.Name)
	}
	fmt.Println(strings.Join(names, " "))
	res := local.Tools.Execute(context.Background(), &registry.Call{Tool: "ext_read", Args: json.RawMessage(`{"file_path":"hello.txt","limit":1}`)})
	fmt.Println(res.IsError, len(res.Text) > 0)
	// Output:
	// list read write edit glob grep ext_edit ext_glob ext_grep ext_list ext_read ext_write
	// false true
}
