package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
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

// The overview reads every table at once: each table's status in it is
// the one read of that table alone (?table= and /tables/{name}/status),
// over tables that differ in partitions, records, dead letters, unknown
// fields and schema versions, two of them over one topic.
func TestOverviewOfManyTables(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: 1, PostgresURL: pgtest.Schema(t), EphemeralPorts: true,
		LeaseTTL: 3 * time.Second, FlushInterval: 200 * time.Millisecond, CommitInterval: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	require.NoError(t, env.Kafka.CreateTopic("raw", 2, nil))
	require.NoError(t, env.Kafka.CreateTopic("orders", 1, nil))
	c := &admin.Client{URL: env.Nodes[0].URL()}
	schema := json.RawMessage(`{"type":"struct","fields":[
		{"id":1,"name":"VBELN","type":"string","required":false},
		{"id":2,"name":"AUFNR","type":"string","required":false}]}`)
	for _, def := range []map[string]any{
		{"namespace": "m", "name": "raw", "topic": "raw", "value_format": "raw"},
		{"namespace": "m", "name": "orders", "topic": "orders", "value_format": "json", "schema": schema},
		{"namespace": "m", "name": "orders_ci", "topic": "orders", "value_format": "json", "schema": schema,
			"properties": map[string]string{"mink.json.field-matching": "case-insensitive"}},
	} {
		_, err := c.CreateTable(ctx, def)
		require.NoError(t, err)
	}
	_, err = c.AlterTable(ctx, "m.orders", json.RawMessage(`{"type":"struct","schema-id":1,"fields":[
		{"id":1,"name":"VBELN","type":"string","required":false},
		{"id":2,"name":"AUFNR","type":"string","required":false},
		{"id":3,"name":"Title","type":"string","required":false}]}`))
	require.NoError(t, err)
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	for i := range 7 { // raw: 4 records in partition 0, 3 in partition 1
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "raw", Partition: int32(i % 2), Value: []byte(fmt.Sprint(i))}).FirstErr())
	}
	for _, v := range []string{`{"VBELN":"0001","AUFNR":"A1"}`, `{"vbeln":"0002","aufnr":"A2"}`, `{"VBELN":"0003"}`} {
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte(v)}).FirstErr())
	}

	var o *admin.Overview
	testkit.Eventually(t, 30*time.Second, 100*time.Millisecond, "every partition committed", func() (bool, string) {
		o, err = c.Overview(ctx, "")
		require.NoError(t, err)
		done := len(o.Tables) == 3
		for _, st := range o.Tables {
			done = done && st.LastCommit != nil && st.Writer != nil
			for _, p := range st.Partitions {
				done = done && p.HighWatermark > 0 && p.CommittedOffset == p.HighWatermark
			}
		}
		return done, fmt.Sprintf("%+v", o.Tables)
	})
	byName := map[string]*admin.TableStatus{}
	for _, st := range o.Tables {
		byName[st.Table] = st
	}
	raw, orders, ci := byName["m.raw"], byName["m.orders"], byName["m.orders_ci"]
	require.NotNil(t, raw)
	require.NotNil(t, orders)
	require.NotNil(t, ci)
	committed := func(st *admin.TableStatus) map[int32]int64 {
		m := map[int32]int64{}
		for _, p := range st.Partitions {
			m[p.Partition] = p.CommittedOffset
		}
		return m
	}
	require.Equal(t, map[int32]int64{0: 4, 1: 3}, committed(raw))
	require.Equal(t, map[int32]int64{0: 3}, committed(orders))
	require.Equal(t, map[int32]int64{0: 3}, committed(ci))
	require.EqualValues(t, 1, orders.DeadLetters)
	require.EqualValues(t, 2, orders.UnknownFields.Count)
	require.Equal(t, []string{"vbeln", "aufnr"}, orders.UnknownFields.Examples)
	require.Equal(t, 2, orders.SchemaVersions)
	require.Equal(t, 1, orders.SchemaID)
	for _, st := range []*admin.TableStatus{raw, ci} {
		require.Zero(t, st.DeadLetters, st.Table)
		require.Zero(t, st.UnknownFields.Count, st.Table)
		require.Equal(t, 1, st.SchemaVersions, st.Table)
	}
	require.NotEqual(t, orders.LastCommit.SnapshotID, ci.LastCommit.SnapshotID)

	// What changes between two reads: lease expiries and rates.
	stable := func(st *admin.TableStatus) admin.TableStatus {
		s := *st
		s.Partitions = slices.Clone(st.Partitions)
		for i := range s.Partitions {
			s.Partitions[i].LeaseExpiresAt, s.Partitions[i].RecordsPerSecond = nil, 0
		}
		w := *st.Writer
		w.ExpiresAt = time.Time{}
		s.Writer = &w
		return s
	}
	for name, st := range byName {
		one, err := c.Overview(ctx, name)
		require.NoError(t, err)
		require.Len(t, one.Tables, 1)
		require.Equal(t, stable(st), stable(one.Tables[0]), name)
		alone, err := c.TableStatus(ctx, name)
		require.NoError(t, err)
		require.Equal(t, stable(st), stable(alone), name)
	}
}
