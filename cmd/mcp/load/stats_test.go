package main

import (
	"fmt"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		ds := make([]time.Duration, len(ns))
		for i, n := range ns {
			ds[i] = time.Duration(n) * time.Millisecond
		}
		return ds
	}
	upTo := func(n int) []time.Duration {
		ds := make([]time.Duration, n)
		for i := range ds {
			ds[n-1-i] = time.Duration(i+1) * time.Millisecond // descending: summarize sorts
		}
		return ds
	}
	ones := func(n int) []time.Duration {
		ds := make([]time.Duration, n)
		for i := range ds {
			ds[i] = time.Millisecond
		}
		return ds
	}
	for _, tc := range []struct {
		name   string
		ds     []time.Duration
		errors int
		want   string
	}{
		{"none", nil, 0, "calls 0, errors 0, p50 0s, p99 0s, max 0s"},
		{"only failures", nil, 3, "calls 3, errors 3, p50 0s, p99 0s, max 0s"},
		{"one", ms(7), 0, "calls 1, errors 0, p50 7ms, p99 7ms, max 7ms"},
		{"unsorted three", ms(3, 1, 2), 1, "calls 4, errors 1, p50 2ms, p99 3ms, max 3ms"},
		{"two: the lower is the median", ms(9, 4), 0, "calls 2, errors 0, p50 4ms, p99 9ms, max 9ms"},
		{"ten: p99 is the max", upTo(10), 0, "calls 10, errors 0, p50 5ms, p99 10ms, max 10ms"},
		{"a hundred", upTo(100), 0, "calls 100, errors 0, p50 50ms, p99 99ms, max 100ms"},
		{"two hundred", upTo(200), 0, "calls 200, errors 0, p50 100ms, p99 198ms, max 200ms"},
		{"one outlier in a hundred stays out of p99", append(ms(500), ones(99)...), 0, "calls 100, errors 0, p50 1ms, p99 1ms, max 500ms"},
		{"two outliers in a hundred reach p99", append(ms(500, 400), ones(98)...), 0, "calls 100, errors 0, p50 1ms, p99 400ms, max 500ms"},
	} {
		l := summarize(tc.ds, tc.errors)
		got := fmt.Sprintf("calls %d, errors %d, p50 %v, p99 %v, max %v", l.Calls, l.Errors, l.P50, l.P99, l.Max)
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
