package admin_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
)

// BenchmarkOverview reads the overview of 100 tables × 4 partitions (no
// data): what `mink status` and the console's /ui cost per read.
func BenchmarkOverview(b *testing.B) {
	const n = 100
	topics := make([]string, n)
	for i := range topics {
		topics[i] = fmt.Sprintf("t%03d", i)
	}
	pool, _ := pgtest.Pool(b)
	k := testkit.NewKafka(b, kfake.SeedTopics(4, topics...))
	h := admin.New(pool, k.Client, admin.Config{NodeID: "n1"})
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := context.Background()
	c := &admin.Client{URL: srv.URL}
	for _, topic := range topics {
		if _, err := c.CreateTable(ctx, map[string]any{"namespace": "b", "name": topic, "topic": topic, "value_format": "raw"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		o, err := h.Overview(ctx, "")
		if err != nil || len(o.Tables) != n {
			b.Fatal(err, len(o.Tables))
		}
	}
}
