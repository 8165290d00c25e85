package main

import (
	"slices"
	"time"
)

// Latency summarizes the calls of one kind: how many, how many failed, and
// the spread of the successful ones' durations (nanoseconds in JSON).
type Latency struct {
	Calls  int           `json:"calls"`
	Errors int           `json:"errors"`
	P50    time.Duration `json:"p50_ns"`
	P99    time.Duration `json:"p99_ns"`
	Max    time.Duration `json:"max_ns"`
}

// summarize sorts ds in place and returns their summary; errors is added
// as it is, since a failed call's time says nothing of the service.
func summarize(ds []time.Duration, errors int) Latency {
	slices.Sort(ds)
	l := Latency{Calls: len(ds) + errors, Errors: errors}
	if len(ds) > 0 {
		l.P50, l.P99, l.Max = percentile(ds, 50), percentile(ds, 99), ds[len(ds)-1]
	}
	return l
}

// percentile is the nearest-rank p-th percentile of sorted, which must not
// be empty: the smallest value at least p percent of the values do not
// exceed. With fewer than 100 values the p99 is the maximum.
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 × n)
	return sorted[max(rank, 1)-1]
}
