package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/plugins/metrics"
	"github.com/gordis-run/gordis/registry"
)

// A host plugs the plugin into its deployment and serves the handler; the
// calls it makes are counted as an MCP client's would be.
func Example() {
	dir, _ := os.MkdirTemp("", "gordis-metrics")
	defer os.RemoveAll(dir)
	d, cleanup, err := gordis.Build(gordis.Options{Workspace: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cleanup()
	f, err := d.Root.Plugin(metrics.Plugin, nil)
	if err == nil {
		err = f.Wait()
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	m, _ := metrics.Service.Get(f.Context()) // serve it: http.Handle("GET /metrics", m)

	session := agent.NewSession(d.Workspace)
	defer session.Close()
	for _, args := range []string{`{"path": "."}`, `{"path": "missing"}`} {
		d.Tools.Execute(context.Background(), &registry.Call{ID: "1", Tool: "list", Args: []byte(args), Session: session})
	}

	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "gordis_tool_calls_total") {
			fmt.Println(sc.Text())
		}
	}
	// Output:
	// gordis_tool_calls_total{code="FS_NOT_FOUND",tool="list"} 1
	// gordis_tool_calls_total{code="OK",tool="list"} 1
}
