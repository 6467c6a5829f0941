package writer_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/tables"
)

// fixture is a table on a topic of an in-process Kafka, in a fresh schema.
type fixture struct {
	pool *pgxpool.Pool
	kf   *kfake.Cluster
	kc   *kafka.Client
	tbl  *tables.Table
}

// newFixture creates the topic def.Topic with the given partitions and
// the table def over it, each partition starting at offset 0.
func newFixture(t *testing.T, partitions int32, def tables.Definition) *fixture {
	t.Helper()
	pool, _ := pgtest.Pool(t)
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, def.Topic))
	require.NoError(t, err)
	t.Cleanup(kf.Close)
	kc, err := kafka.New(kafka.Config{Brokers: kf.ListenAddrs()})
	require.NoError(t, err)
	t.Cleanup(kc.Close)
	starts := make([]tables.PartitionStart, partitions)
	for p := range starts {
		starts[p] = tables.PartitionStart{Partition: int32(p)}
	}
	tbl, err := tables.Create(context.Background(), pool, "mink", def, starts)
	require.NoError(t, err)
	return &fixture{pool: pool, kf: kf, kc: kc, tbl: tbl}
}

// take gives the lease of scope to holder, as the cluster loop does.
func (f *fixture) take(t *testing.T, scope, holder string) cluster.Lease {
	t.Helper()
	var l cluster.Lease
	require.NoError(t, f.pool.QueryRow(context.Background(), `
		UPDATE leases SET holder = $2, epoch = epoch + 1, expires_at = now() + interval '1 minute'
		WHERE scope = $1 RETURNING scope, table_id, kind, coalesce(partition, 0), holder, epoch`, scope, holder).
		Scan(&l.Scope, &l.TableID, &l.Kind, &l.Partition, &l.Holder, &l.Epoch))
	return l
}

// waitFor polls cond every 20 ms for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		require.False(t, time.Now().After(deadline), "timed out waiting for %s", what)
		time.Sleep(20 * time.Millisecond)
	}
}
