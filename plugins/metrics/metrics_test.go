package metrics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/agent"
	"github.com/gordis-run/gordis/plugins/mcpserver/mcpevents"
	"github.com/gordis-run/gordis/plugins/metrics"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

// host is the default deployment with the metrics plugin, its handler
// served over HTTP.
type host struct {
	d       *gordis.Deployment
	session *agent.Session
	url     string
}

func newHost(t testing.TB) *host {
	t.Helper()
	d, cleanup, err := gordis.Build(gordis.Options{Workspace: t.TempDir(), Logger: slog.New(runtimetest.NewLogs())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	f := runtimetest.Plug(t, d.Root, metrics.Plugin, nil)
	m, err := metrics.Service.Get(f.Context())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	session := agent.NewSession(d.Workspace)
	t.Cleanup(session.Close)
	return &host{d: d, session: session, url: srv.URL}
}

func (h *host) file(t testing.TB, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.d.Workspace, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// call runs one call through the registry and returns its code.
func (h *host) call(t testing.TB, tool string, args map[string]any) string {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return h.d.Tools.Execute(context.Background(), &registry.Call{ID: tool, Tool: tool, Args: raw, Session: h.session}).Code()
}

// scrape gets the metrics and returns every gordis series as
// name{label="value",...} → value; a histogram shows as its _count.
func (h *host) scrape(t testing.TB) map[string]float64 {
	t.Helper()
	fams := h.families(t)
	out := map[string]float64{}
	for name, f := range fams {
		if !strings.HasPrefix(name, "gordis_") {
			continue
		}
		for _, m := range f.Metric {
			key := name + labels(m.Label)
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[name+"_count"+labels(m.Label)] = float64(m.GetHistogram().GetSampleCount())
			default:
				t.Fatalf("%s: unexpected type %s", name, f.GetType())
			}
		}
	}
	return out
}

func (h *host) families(t testing.TB) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := families(h.url)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// families gets and parses the exposition at url.
func families(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

func labels(ls []*dto.LabelPair) string {
	if len(ls) == 0 {
		return ""
	}
	var parts []string
	for _, l := range ls {
		parts = append(parts, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// zero are the series shown before anything happened.
var zero = map[string]float64{
	"gordis_tool_calls_in_flight":                          0,
	"gordis_mcp_sessions":                                  0,
	"gordis_auth_failures_total":                           0,
	`gordis_limit_refusals_total{limit="calls_in_flight"}`: 0,
	`gordis_limit_refusals_total{limit="message"}`:         0,
	`gordis_limit_refusals_total{limit="rate"}`:            0,
	`gordis_limit_refusals_total{limit="sessions"}`:        0,
}

func with(base map[string]float64, more map[string]float64) map[string]float64 {
	out := maps.Clone(base)
	maps.Copy(out, more)
	return out
}

func diff(got, want map[string]float64) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok || g != want[k] {
			fmt.Fprintf(&b, "%s = %v (present %t), want %v\n", k, g, ok, want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "%s = %v, unexpected\n", k, got[k])
		}
	}
	return b.String()
}

// TestHost: a host that plugs the plugin into the default deployment sees
// its calls counted by tool and code, timed, and the bytes the file tools
// read and wrote, as soon as the calls have returned.
func TestHost(t *testing.T) {
	h := newHost(t)
	if d := diff(h.scrape(t), zero); d != "" {
		t.Errorf("before any call:\n%s", d)
	}
	h.file(t, "a.txt", "alpha\nbeta\n")
	h.file(t, "b.txt", "old\n")
	for _, c := range []struct {
		tool string
		args map[string]any
		code string
	}{
		{"read", map[string]any{"file_path": "a.txt"}, "OK"},
		{"read", map[string]any{"file_path": "a.txt", "offset": 2}, "OK"},
		{"read", map[string]any{"file_path": "missing.txt"}, "FS_NOT_FOUND"},
		{"write", map[string]any{"file_path": "b.txt", "content": "new\n"}, "FS_NOT_OBSERVED"},
		{"write", map[string]any{"file_path": "c.txt", "content": "hello\r\nworld\r\n"}, "OK"},
		{"edit", map[string]any{"file_path": "c.txt", "old_string": "hello", "new_string": "hi"}, "OK"},
		{"list", map[string]any{"path": "."}, "OK"},
		{"invented", nil, registry.CodeUnknownTool},
	} {
		if got := h.call(t, c.tool, c.args); got != c.code {
			t.Fatalf("%s %v: %s, want %s", c.tool, c.args, got, c.code)
		}
	}
	want := with(zero, map[string]float64{
		`gordis_tool_calls_total{code="OK",tool="read"}`:                  2,
		`gordis_tool_calls_total{code="FS_NOT_FOUND",tool="read"}`:        1,
		`gordis_tool_calls_total{code="FS_NOT_OBSERVED",tool="write"}`:    1,
		`gordis_tool_calls_total{code="OK",tool="write"}`:                 1,
		`gordis_tool_calls_total{code="OK",tool="edit"}`:                  1,
		`gordis_tool_calls_total{code="OK",tool="list"}`:                  1,
		`gordis_tool_calls_total{code="TOOL_NOT_FOUND",tool="(unknown)"}`: 1,
		`gordis_tool_call_duration_seconds_count{tool="read"}`:            3,
		`gordis_tool_call_duration_seconds_count{tool="write"}`:           2,
		`gordis_tool_call_duration_seconds_count{tool="edit"}`:            1,
		`gordis_tool_call_duration_seconds_count{tool="list"}`:            1,
		`gordis_tool_call_duration_seconds_count{tool="(unknown)"}`:       1,
		// "alpha\n" and "beta\n", then "beta\n".
		`gordis_tool_read_bytes_total{tool="read"}`: 16,
		// The content as given; the edited file's text after the edit ("hi\nworld\n").
		`gordis_tool_written_bytes_total{tool="write"}`: 14,
		`gordis_tool_written_bytes_total{tool="edit"}`:  9,
	})
	if d := diff(h.scrape(t), want); d != "" {
		t.Errorf("after the calls:\n%s", d)
	}
	fams := h.families(t)
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if fams[name] == nil {
			t.Errorf("no %s: the Go and process collectors are missing", name)
		}
	}
	hist := fams["gordis_tool_call_duration_seconds"]
	if b := hist.GetMetric()[0].GetHistogram().GetBucket(); len(b) != 15 || b[0].GetUpperBound() != 0.001 || b[13].GetUpperBound() != 30 || !math.IsInf(b[14].GetUpperBound(), 1) {
		t.Errorf("buckets: %v", b)
	}
}

// TestServerEvents: the MCP server's events, emitted here as the server
// does, move the sessions gauge and the failure and refusal counters.
func TestServerEvents(t *testing.T) {
	h := newHost(t)
	for _, err := range []error{
		mcpevents.SessionEvent.Emit(h.d.Root, mcpevents.Session{ID: "a", Open: true}),
		mcpevents.SessionEvent.Emit(h.d.Root, mcpevents.Session{ID: "b", Open: true}),
		mcpevents.SessionEvent.Emit(h.d.Root, mcpevents.Session{ID: "a"}),
		mcpevents.AuthFailureEvent.Emit(h.d.Root, mcpevents.AuthFailure{Remote: "127.0.0.1:1"}),
		mcpevents.AuthFailureEvent.Emit(h.d.Root, mcpevents.AuthFailure{Remote: "127.0.0.1:2"}),
		mcpevents.RefusalEvent.Emit(h.d.Root, mcpevents.Refusal{Limit: mcpevents.LimitRate}),
		mcpevents.RefusalEvent.Emit(h.d.Root, mcpevents.Refusal{Limit: mcpevents.LimitRate}),
		mcpevents.RefusalEvent.Emit(h.d.Root, mcpevents.Refusal{Limit: mcpevents.LimitMessage}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := with(zero, map[string]float64{
		"gordis_mcp_sessions":                          1,
		"gordis_auth_failures_total":                   2,
		`gordis_limit_refusals_total{limit="rate"}`:    2,
		`gordis_limit_refusals_total{limit="message"}`: 1,
	})
	if d := diff(h.scrape(t), want); d != "" {
		t.Errorf("after the events:\n%s", d)
	}
}

// TestTwoDeployments: each deployment in a process counts its own calls on
// its own registry (the global one would refuse the second).
func TestTwoDeployments(t *testing.T) {
	a, b := newHost(t), newHost(t)
	a.file(t, "a.txt", "a\n")
	a.call(t, "read", map[string]any{"file_path": "a.txt"})
	if got := a.scrape(t)[`gordis_tool_calls_total{code="OK",tool="read"}`]; got != 1 {
		t.Errorf("the first deployment counts %v reads, want 1", got)
	}
	if d := diff(b.scrape(t), zero); d != "" {
		t.Errorf("the second deployment:\n%s", d)
	}
}

// TestConcurrentCallsAndScrapes: calls from many goroutines while another
// scrapes: no scrape sees more calls in flight than callers, or fewer than
// none (a call's start is observed before its result); once they are done
// every call is counted, none is in flight.
func TestConcurrentCallsAndScrapes(t *testing.T) {
	h := newHost(t)
	h.file(t, "a.txt", "alpha\n")
	const workers, calls = 8, 50
	var wg sync.WaitGroup
	done := make(chan struct{})
	scraped := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-done:
				scraped <- n
				return
			default:
				fams, err := families(h.url)
				if err != nil {
					t.Error(err)
				} else if v := fams["gordis_tool_calls_in_flight"].GetMetric()[0].GetGauge().GetValue(); v < 0 || v > workers {
					t.Errorf("%v calls in flight, want 0 to %d", v, workers)
				}
				n++
			}
		}
	}()
	for range workers {
		wg.Go(func() {
			session := agent.NewSession(h.d.Workspace)
			defer session.Close()
			for range calls {
				res := h.d.Tools.Execute(context.Background(), &registry.Call{ID: "r", Tool: "read", Args: json.RawMessage(`{"file_path":"a.txt"}`), Session: session})
				if res.IsError {
					t.Error(res.Text)
					return
				}
			}
		})
	}
	wg.Wait()
	close(done)
	if n := <-scraped; n == 0 {
		t.Error("no scrape ran during the calls")
	}
	got := h.scrape(t)
	for k, want := range map[string]float64{
		`gordis_tool_calls_total{code="OK",tool="read"}`:       workers * calls,
		`gordis_tool_call_duration_seconds_count{tool="read"}`: workers * calls,
		`gordis_tool_read_bytes_total{tool="read"}`:            workers * calls * 6, // "alpha\n"
		"gordis_tool_calls_in_flight":                          0,
	} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
}
