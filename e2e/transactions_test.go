package e2e

import (
	"context"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/internal/clustertest"
)

// Aborted transactions and control records never become rows, and an open
// transaction holds the visible end at the last stable offset: records
// produced after it opened appear only once it ends.
func TestTransactions(t *testing.T) {
	env := startEnv(t, 1)
	ctx := context.Background()
	url := env.Nodes[0].URL()
	createTable(t, env, 1, map[string]any{
		"namespace": "test", "name": "tx", "topic": "tx", "value_format": "raw"})

	plain, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.DefaultProduceTopic("tx"))
	require.NoError(t, err)
	defer plain.Close()
	txClient := func(id string) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.DefaultProduceTopic("tx"), kgo.TransactionalID(id))
		require.NoError(t, err)
		t.Cleanup(cl.Close)
		return cl
	}
	produce := func(cl *kgo.Client, vals ...string) {
		var recs []*kgo.Record
		for _, v := range vals {
			recs = append(recs, &kgo.Record{Value: []byte(v)})
		}
		require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
	}
	inTx := func(cl *kgo.Client, commit bool, vals ...string) {
		require.NoError(t, cl.BeginTransaction())
		produce(cl, vals...)
		end := kgo.TryAbort
		if commit {
			end = kgo.TryCommit
		}
		require.NoError(t, cl.EndTransaction(ctx, end))
	}

	a, b, c := txClient("a"), txClient("b"), txClient("c")
	produce(plain, "p1")
	inTx(a, true, "a1", "a2", "a3")
	inTx(b, false, "b1", "b2")
	produce(plain, "p2")
	require.NoError(t, c.BeginTransaction()) // stays open
	produce(c, "c1", "c2")
	produce(plain, "p3") // past the last stable offset while c is open
	inTx(a, true, "a4")

	values := func() []string {
		at := clustertest.ScanAll(t, url, "test.tx")
		var out []string
		for _, chunk := range clustertest.Column(t, at, "value") {
			for i := 0; i < chunk.Len(); i++ {
				out = append(out, string(chunk.(*array.Binary).Value(i)))
			}
		}
		sort.Strings(out)
		return out
	}
	// Zero-lag load: everything committed below the open transaction.
	require.Equal(t, []string{"a1", "a2", "a3", "p1", "p2"}, values(), "aborted b never appears; c holds the visible end")

	require.NoError(t, c.EndTransaction(ctx, kgo.TryCommit))
	require.Equal(t, []string{"a1", "a2", "a3", "a4", "c1", "c2", "p1", "p2", "p3"}, values())

	// Once indexed and committed, the same rows, from committed files.
	clustertest.WaitCaughtUp(t, url, "test.tx")
	require.Equal(t, []string{"a1", "a2", "a3", "a4", "c1", "c2", "p1", "p2", "p3"}, values())
}
