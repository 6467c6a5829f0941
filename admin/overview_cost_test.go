package admin_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
)

// statementCounter is a pgx tracer that counts the statements a pool
// sends (BEGIN and COMMIT included).
type statementCounter struct{ n atomic.Int64 }

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (*statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// overviewFixture is an admin handler over n tables of 4 partitions (no
// data), whose pool counts its statements.
func overviewFixture(tb testing.TB, n int) (*admin.Handler, *statementCounter) {
	tb.Helper()
	topics := make([]string, n)
	for i := range topics {
		topics[i] = fmt.Sprintf("t%03d", i)
	}
	_, u := pgtest.Pool(tb) // migrates the schema
	cfg, err := pgxpool.ParseConfig(u)
	require.NoError(tb, err)
	counter := &statementCounter{}
	cfg.ConnConfig.Tracer = counter
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(tb, err)
	tb.Cleanup(pool.Close)
	k := testkit.NewKafka(tb, kfake.SeedTopics(4, topics...))
	h := admin.New(pool, k.Client, admin.Config{NodeID: "n1"})
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	c := &admin.Client{URL: srv.URL}
	for _, topic := range topics {
		_, err := c.CreateTable(context.Background(), map[string]any{"namespace": "b", "name": topic, "topic": topic, "value_format": "raw"})
		require.NoError(tb, err)
	}
	return h, counter
}

// One overview read costs the same number of Postgres statements for 1
// table as for 20: its load on Postgres is bounded whatever the number of
// tables (issue 14).
func TestOverviewStatements(t *testing.T) {
	ctx := context.Background()
	var counts []int64
	for _, n := range []int{1, 20} {
		h, counter := overviewFixture(t, n)
		before := counter.n.Load()
		o, err := h.Overview(ctx, "")
		require.NoError(t, err)
		require.Len(t, o.Tables, n)
		for _, st := range o.Tables {
			require.Len(t, st.Partitions, 4, st.Table)
			require.Empty(t, st.KafkaError, st.Table)
		}
		counts = append(counts, counter.n.Load()-before)
	}
	require.Equal(t, counts[0], counts[1], "statements of one overview read of 1 and of 20 tables")
}
