package mcpserver

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The metrics of the server, in the Prometheus text format (version
// 0.0.4), written by hand: a handful of counters and one histogram do not
// need a client library and its dependencies in every build of cmd/mcp.
// They count the calls that come through MCP; a host's own agent calls do
// not pass here.

// durationBuckets are the upper bounds of the call duration histogram, in
// seconds: from a small read to a large write.
var durationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// The limits a refusal names in gordis_limit_refusals_total.
const (
	limitMessage  = "message"
	limitSessions = "sessions"
	limitCalls    = "calls_in_flight"
	limitRate     = "rate"
)

type metrics struct {
	inFlight     atomic.Int64
	authFailures atomic.Uint64

	mu        sync.Mutex
	calls     map[callKey]uint64    // by tool and code
	durations map[string]*histogram // by tool
	refusals  map[string]uint64     // by limit
}

type callKey struct{ tool, code string }

type histogram struct {
	counts []uint64 // per bucket, not cumulative
	sum    float64
	count  uint64
}

func newMetrics() *metrics {
	return &metrics{calls: map[callKey]uint64{}, durations: map[string]*histogram{}, refusals: map[string]uint64{}}
}

func (m *metrics) called(tool, code string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls[callKey{tool, code}]++
	h, ok := m.durations[tool]
	if !ok {
		h = &histogram{counts: make([]uint64, len(durationBuckets))}
		m.durations[tool] = h
	}
	s := d.Seconds()
	if i, _ := slices.BinarySearch(durationBuckets, s); i < len(durationBuckets) {
		h.counts[i]++
	}
	h.sum += s
	h.count++
}

func (m *metrics) refused(limit string) {
	m.mu.Lock()
	m.refusals[limit]++
	m.mu.Unlock()
}

// write writes every metric; sessions is the number of open sessions.
func (m *metrics) write(w io.Writer, sessions int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprint(w, "# HELP gordis_tool_calls_total Tool calls through MCP, by tool and result code (OK, ERROR or the error's code).\n# TYPE gordis_tool_calls_total counter\n")
	for _, k := range slices.SortedFunc(maps.Keys(m.calls), func(a, b callKey) int {
		return strings.Compare(a.tool+"\x00"+a.code, b.tool+"\x00"+b.code)
	}) {
		fmt.Fprintf(w, "gordis_tool_calls_total{tool=%s,code=%s} %d\n", label(k.tool), label(k.code), m.calls[k])
	}
	fmt.Fprint(w, "# HELP gordis_tool_call_duration_seconds How long tool calls through MCP took, by tool.\n# TYPE gordis_tool_call_duration_seconds histogram\n")
	for _, tool := range slices.Sorted(maps.Keys(m.durations)) {
		h := m.durations[tool]
		var cumulative uint64
		for i, le := range durationBuckets {
			cumulative += h.counts[i]
			fmt.Fprintf(w, "gordis_tool_call_duration_seconds_bucket{tool=%s,le=\"%g\"} %d\n", label(tool), le, cumulative)
		}
		fmt.Fprintf(w, "gordis_tool_call_duration_seconds_bucket{tool=%s,le=\"+Inf\"} %d\n", label(tool), h.count)
		fmt.Fprintf(w, "gordis_tool_call_duration_seconds_sum{tool=%s} %g\n", label(tool), h.sum)
		fmt.Fprintf(w, "gordis_tool_call_duration_seconds_count{tool=%s} %d\n", label(tool), h.count)
	}
	fmt.Fprintf(w, "# HELP gordis_tool_calls_in_flight Tool calls through MCP running now.\n# TYPE gordis_tool_calls_in_flight gauge\ngordis_tool_calls_in_flight %d\n", m.inFlight.Load())
	fmt.Fprintf(w, "# HELP gordis_mcp_sessions Open MCP sessions.\n# TYPE gordis_mcp_sessions gauge\ngordis_mcp_sessions %d\n", sessions)
	fmt.Fprintf(w, "# HELP gordis_auth_failures_total Requests refused for a missing or wrong bearer token.\n# TYPE gordis_auth_failures_total counter\ngordis_auth_failures_total %d\n", m.authFailures.Load())
	fmt.Fprint(w, "# HELP gordis_limit_refusals_total Requests and calls refused by a limit, by limit.\n# TYPE gordis_limit_refusals_total counter\n")
	for _, limit := range []string{limitCalls, limitMessage, limitRate, limitSessions} {
		fmt.Fprintf(w, "gordis_limit_refusals_total{limit=%q} %d\n", limit, m.refusals[limit])
	}
}

// label is a label value in the text format: quoted, with backslash,
// double quote and newline escaped.
func label(v string) string {
	return `"` + labelEscaper.Replace(v) + `"`
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// MetricsHandler serves the server's metrics in the Prometheus text
// format. It asks for no token: serve it on a listener of its own that
// only the monitoring reaches (cmd/mcp --metrics).
func (s *Server) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		sessions := 0
		for range s.sdk.Sessions() {
			sessions++
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		s.metrics.write(w, sessions)
	})
}
