package admin_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
)

// GET /admin/v1/overview, over two real nodes that index and commit a
// table: the nodes with their partition-lease counts and the table they
// write, and per table its partitions (holders, lease expiries, offsets),
// data files and last commit, at the database clock's time; ?table= one
// table, 404 for a missing one, 400 for a dead-letter table.
func TestOverview(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: 2, PostgresURL: pgtest.Schema(t), EphemeralPorts: true,
		LeaseTTL: 3 * time.Second, FlushInterval: 200 * time.Millisecond, CommitInterval: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	require.NoError(t, env.Kafka.CreateTopic("ov", 4, nil))
	require.NoError(t, env.CreateTable(ctx, env.Nodes[0].URL(), map[string]any{
		"namespace": "ov", "name": "events", "topic": "ov", "value_format": "raw"}))
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	for i := range 40 {
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "ov", Partition: int32(i % 4), Value: []byte(fmt.Sprint(i))}).FirstErr())
	}

	c := &admin.Client{URL: env.Nodes[1].URL()}
	var o *admin.Overview
	testkit.Eventually(t, 30*time.Second, 100*time.Millisecond, "every partition committed", func() (bool, string) {
		o, err = c.Overview(ctx, "")
		require.NoError(t, err)
		if len(o.Tables) != 1 {
			return false, fmt.Sprint(o.Tables)
		}
		done := len(o.Nodes) == 2 && o.Tables[0].LastCommit != nil && o.Tables[0].Writer != nil
		for _, p := range o.Tables[0].Partitions {
			done = done && p.Holder != nil && p.CommittedOffset == 10 && p.HighWatermark == 10
		}
		return done, fmt.Sprintf("%+v", o.Tables[0])
	})
	st := o.Tables[0]
	require.Equal(t, "ov.events", st.Table)
	require.Equal(t, "ov", st.Topic)
	require.Len(t, st.Partitions, 4)
	held := map[string]int{}
	for _, p := range st.Partitions {
		held[*p.Holder]++
		require.NotNil(t, p.LeaseExpiresAt)
		require.True(t, p.LeaseExpiresAt.After(o.Time), "a held lease expires after the overview's time")
		require.EqualValues(t, 10, p.IndexedOffset)
		require.Zero(t, p.Lag)
	}
	require.Positive(t, st.Files.Count)
	require.Positive(t, st.Files.Bytes)
	require.Equal(t, st.Writer.Holder, st.LastCommit.Writer, "the writer committed the last snapshot")
	require.NotZero(t, st.LastCommit.SnapshotID)
	require.False(t, st.LastCommit.CommittedAt.After(o.Time))
	require.Equal(t, 1, st.SchemaVersions)
	require.Zero(t, st.DeadLetters)
	for _, n := range o.Nodes {
		require.Equal(t, held[n.ID], n.PartitionLeases, n.ID)
		require.True(t, n.ExpiresAt.After(o.Time))
		require.False(t, n.StartedAt.After(o.Time))
		if n.ID == st.Writer.Holder {
			require.Equal(t, []admin.WriterOf{{Table: "ov.events", Epoch: st.Writer.Epoch}}, n.WriterOf)
		} else {
			require.Empty(t, n.WriterOf)
		}
	}

	one, err := c.Overview(ctx, "ov.events")
	require.NoError(t, err)
	require.Len(t, one.Tables, 1)
	require.Equal(t, "ov.events", one.Tables[0].Table)
	for name, code := range map[string]int{"ov.nope": http.StatusNotFound, "ov.events~dlq": http.StatusBadRequest, "nodots": http.StatusBadRequest} {
		_, err := c.Overview(ctx, name)
		var se *admin.StatusError
		require.True(t, errors.As(err, &se), "%s: %v", name, err)
		require.Equal(t, code, se.Code, "%s: %v", name, err)
	}
}
