package admin_test

import (
	"context"
	"testing"
)

// BenchmarkOverview reads the overview of 100 tables × 4 partitions (no
// data): what `mink status` and the console's /ui cost per read, in time
// and in Postgres statements (statements/op).
func BenchmarkOverview(b *testing.B) {
	const n = 100
	h, counter := overviewFixture(b, n)
	ctx := context.Background()
	b.ResetTimer()
	before := counter.n.Load()
	for b.Loop() {
		o, err := h.Overview(ctx, "")
		if err != nil || len(o.Tables) != n {
			b.Fatal(err, len(o.Tables))
		}
	}
	b.ReportMetric(float64(counter.n.Load()-before)/float64(b.N), "statements/op")
}
