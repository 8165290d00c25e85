package fspolicy

import (
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
)

// BenchmarkObserveThenDecide is the policy's share of a read followed by an
// edit: one recorded observation and one edit decision.
func BenchmarkObserveThenDecide(b *testing.B) {
	p := newPolicy()
	defer p.close()
	a := actor(newSession())
	req := fs.IntentRequest{Target: target, Actor: a}
	obs := fs.Observation{Target: target, Version: "v1", Actor: a}
	b.ReportAllocs()
	for b.Loop() {
		p.observe(obs)
		if _, err := p.editIntent(req, nil); err != nil {
			b.Fatal(err)
		}
	}
}
