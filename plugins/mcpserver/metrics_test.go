package mcpserver

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// The text format, exactly: counters by label in order, the histogram's
// buckets cumulative, every limit present from the start.
func TestMetricsText(t *testing.T) {
	m := newMetrics()
	m.called("read", "OK", 2*time.Millisecond)
	m.called("read", "OK", 40*time.Millisecond)
	m.called("read", "FS_NOT_FOUND", time.Minute)
	m.called("edit", "OK", 500*time.Millisecond)
	m.refused(limitRate)
	m.refused(limitRate)
	m.authFailures.Add(3)
	m.inFlight.Add(1)
	var b strings.Builder
	m.write(&b, 4)
	want := `# HELP gordis_tool_calls_total Tool calls through MCP, by tool and result code (OK, ERROR or the error's code).
# TYPE gordis_tool_calls_total counter
gordis_tool_calls_total{tool="edit",code="OK"} 1
gordis_tool_calls_total{tool="read",code="FS_NOT_FOUND"} 1
gordis_tool_calls_total{tool="read",code="OK"} 2
# HELP gordis_tool_call_duration_seconds How long tool calls through MCP took, by tool.
# TYPE gordis_tool_call_duration_seconds histogram
` + buckets("edit", 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1) + `gordis_tool_call_duration_seconds_sum{tool="edit"} 0.5
gordis_tool_call_duration_seconds_count{tool="edit"} 1
` + buckets("read", 0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3) + `gordis_tool_call_duration_seconds_sum{tool="read"} 60.042
gordis_tool_call_duration_seconds_count{tool="read"} 3
# HELP gordis_tool_calls_in_flight Tool calls through MCP running now.
# TYPE gordis_tool_calls_in_flight gauge
gordis_tool_calls_in_flight 1
# HELP gordis_mcp_sessions Open MCP sessions.
# TYPE gordis_mcp_sessions gauge
gordis_mcp_sessions 4
# HELP gordis_auth_failures_total Requests refused for a missing or wrong bearer token.
# TYPE gordis_auth_failures_total counter
gordis_auth_failures_total 3
# HELP gordis_limit_refusals_total Requests and calls refused by a limit, by limit.
# TYPE gordis_limit_refusals_total counter
gordis_limit_refusals_total{limit="calls_in_flight"} 0
gordis_limit_refusals_total{limit="message"} 0
gordis_limit_refusals_total{limit="rate"} 2
gordis_limit_refusals_total{limit="sessions"} 0
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// buckets is a histogram's bucket lines for tool: the cumulative counts of
// durationBuckets, then +Inf.
func buckets(tool string, counts ...int) string {
	les := []string{"0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "+Inf"}
	var b strings.Builder
	for i, le := range les {
		b.WriteString(`gordis_tool_call_duration_seconds_bucket{tool="` + tool + `",le="` + le + `"} ` + strconv.Itoa(counts[i]) + "\n")
	}
	return b.String()
}

func TestLabelEscapes(t *testing.T) {
	if got, want := label("a\\b\"c\nd"), `"a\\b\"c\nd"`; got != want {
		t.Errorf("label = %s, want %s", got, want)
	}
}
