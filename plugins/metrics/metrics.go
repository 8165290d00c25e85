// Package metrics counts what a deployment does, for Prometheus: tool calls
// by tool and result code, their durations, the calls in flight, the bytes
// the file tools read and wrote, and, when an MCP server is plugged, its
// open sessions, authentication failures and limit refusals.
//
// The plugin observes events (tools/start, tools/result and the mcpevents);
// it never listens synchronously, so it adds nothing to a call's path but
// the cost of publishing the events to observers, and a slow scrape cannot
// hold a call. A host that plugs it gets the same metrics whether its calls
// come from an agent, from MCP or from its own code.
//
// Each Metrics has its own prometheus.Registry, with the Go runtime's and
// the process's collectors, never the global one: two deployments in one
// process each serve their own. The server's events are declared in package
// mcpevents, which imports only the runtime, so observing them does not
// build the MCP SDK into a host that has no MCP server. docs/metrics.md
// lists every metric.
package metrics

import (
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/plugins/mcpserver/mcpevents"
	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

// Service is the "metrics" service: the metrics of the runtime it was
// plugged into.
var Service = runtime.NewService[*Metrics]("metrics")

// Plugin provides the "metrics" service. It needs no other service: it may
// be plugged anywhere in the runtime, before or after the plugins it
// counts; disposing it stops the counting.
var Plugin = runtime.Func("metrics", func(ctx *runtime.Context) error {
	m, err := New(ctx)
	if err != nil {
		return err
	}
	return Service.Provide(ctx, m)
})

// durationBuckets are the upper bounds of the call duration histogram, in
// seconds: from a small read to a large write.
var durationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// unknownTool is the tool label of calls to a tool that does not exist, so
// that a caller inventing names cannot grow the series without bound.
const unknownTool = "(unknown)"

// Metrics is an http.Handler that serves the metrics in the Prometheus
// exposition formats. It asks for no token: serve it where only the
// monitoring reaches.
type Metrics struct {
	rt      *runtime.Context
	handler http.Handler

	calls     *prometheus.CounterVec
	durations *prometheus.HistogramVec
	inFlight  prometheus.Gauge
	read      *prometheus.CounterVec
	written   *prometheus.CounterVec
	sessions  prometheus.Gauge
	authFails prometheus.Counter
	refusals  *prometheus.CounterVec
}

var _ http.Handler = (*Metrics)(nil)

// New starts counting the events of ctx's runtime until ctx's fiber is
// disposed. Hosts that do not load Plugin use it directly.
func New(ctx *runtime.Context) (*Metrics, error) {
	m := &Metrics{
		rt: ctx,
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gordis_tool_calls_total",
			Help: "Tool calls, by tool and result code (OK, ERROR or the error's code).",
		}, []string{"tool", "code"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gordis_tool_call_duration_seconds",
			Help:    "How long tool calls took, by tool.",
			Buckets: durationBuckets,
		}, []string{"tool"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gordis_tool_calls_in_flight",
			Help: "Tool calls started and not yet finished.",
		}),
		read: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gordis_tool_read_bytes_total",
			Help: "Bytes of file content the file tools returned, by tool.",
		}, []string{"tool"}),
		written: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gordis_tool_written_bytes_total",
			Help: "Bytes of file content the file tools stored, by tool.",
		}, []string{"tool"}),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gordis_mcp_sessions",
			Help: "Open MCP sessions.",
		}),
		authFails: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gordis_auth_failures_total",
			Help: "Requests refused for a missing or wrong bearer token.",
		}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gordis_limit_refusals_total",
			Help: "Requests and calls refused by a limit, by limit.",
		}, []string{"limit"}),
	}
	for _, limit := range mcpevents.Limits {
		m.refusals.WithLabelValues(string(limit)) // each shown from 0
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.calls, m.durations, m.inFlight, m.read, m.written, m.sessions, m.authFails, m.refusals,
	)
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})

	err := errors.Join(
		registry.StartEvent.Observe(ctx, func(registry.Start) { m.inFlight.Inc() }),
		registry.ResultEvent.Observe(ctx, m.result),
		mcpevents.SessionEvent.Observe(ctx, m.session),
		mcpevents.AuthFailureEvent.Observe(ctx, func(mcpevents.AuthFailure) { m.authFails.Inc() }),
		mcpevents.RefusalEvent.Observe(ctx, func(r mcpevents.Refusal) { m.refusals.WithLabelValues(string(r.Limit)).Inc() }),
	)
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Metrics) result(res *registry.Result) {
	if res == nil {
		return
	}
	m.inFlight.Dec()
	code := res.Code()
	tool := res.Tool
	if code == registry.CodeUnknownTool {
		tool = unknownTool
	}
	m.calls.WithLabelValues(tool, code).Inc()
	m.durations.WithLabelValues(tool).Observe(res.Duration.Seconds())
	if t, ok := res.Value.(fs.Transfer); ok {
		read, written := t.Transferred()
		if read > 0 {
			m.read.WithLabelValues(tool).Add(float64(read))
		}
		if written > 0 {
			m.written.WithLabelValues(tool).Add(float64(written))
		}
	}
}

func (m *Metrics) session(s mcpevents.Session) {
	if s.Open {
		m.sessions.Inc()
	} else {
		m.sessions.Dec()
	}
}

// ServeHTTP serves the metrics once every event emitted so far has been
// counted: a scrape that follows a call sees it.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.rt.Flush()
	m.handler.ServeHTTP(w, r)
}
