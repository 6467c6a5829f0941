package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/tables"
)

// TestGroupTags: a table created with mink.group-tags=billing; a franz-go
// consumer group billing consumes part of the topic and commits offsets
// (partition 0 at 40, none on partition 1, partition 2 at 75). The table's
// refs then hold the tag group.billing, off branch main, whose snapshot,
// scanned with iceberg-go through the REST catalog and S3 API, holds
// exactly the records below the committed offsets and none of partition
// 1. The group commits again (0 at 90, 1 at 30): the tag moves to a new
// snapshot cut there, and the old one leaves the metadata. A property
// change through the admin API that no longer names billing removes the
// tag and its snapshot (docs/design.md §4.8).
func TestGroupTags(t *testing.T) {
	ctx := context.Background()
	env := startEnv(t, 1)
	const topic, partitions, perPartition = "gt", 3, 100
	createTable(t, env, partitions, map[string]any{"namespace": "gt", "name": "events", "topic": topic,
		"value_format": "raw", "properties": map[string]string{"mink.group-tags": "billing,audit-*"}})
	prod, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer prod.Close()
	var recs []*kgo.Record
	for p := range int32(partitions) {
		for o := range perPartition {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%d:%d", p, o)})
		}
	}
	require.NoError(t, prod.ProduceSync(ctx, recs...).FirstErr())

	// The consumer group reads part of the topic, then commits where it
	// stands.
	cons, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.ConsumerGroup("billing"), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cons.Close()
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	fs := cons.PollRecords(pctx, 10)
	cancel()
	require.NoError(t, fs.Err())
	require.NotZero(t, fs.NumRecords())
	commitAt := func(offs map[int32]int64) {
		t.Helper()
		eo := map[int32]kgo.EpochOffset{}
		for p, o := range offs {
			eo[p] = kgo.EpochOffset{Epoch: -1, Offset: o}
		}
		var cerr error
		cons.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{topic: eo},
			func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
				cerr = err
				for _, rt := range resp.Topics {
					for _, rp := range rt.Partitions {
						if err := kerr.ErrorForCode(rp.ErrorCode); err != nil && cerr == nil {
							cerr = err
						}
					}
				}
			})
		require.NoError(t, cerr)
	}
	began := time.Now()
	commitAt(map[int32]int64{0: 40, 2: 75})

	cat, err := rest.NewCatalog(ctx, "mink", env.Nodes[0].URL())
	require.NoError(t, err)
	first := checkGroupTag(t, cat, "0:40,1:0,2:75", map[int32]int64{0: 40, 1: 0, 2: 75}, 0)
	t.Logf("tag after %v", time.Since(began).Round(time.Millisecond))

	began = time.Now()
	commitAt(map[int32]int64{0: 90, 1: 30})
	moved := checkGroupTag(t, cat, "0:90,1:30,2:75", map[int32]int64{0: 90, 1: 30, 2: 75}, first)
	t.Logf("moved after %v", time.Since(began).Round(time.Millisecond))

	// The property changes through the admin API: billing is no longer
	// named, and its tag and snapshot go.
	began = time.Now()
	tb, err := (&admin.Client{URL: env.Nodes[0].URL()}).SetProperties(ctx, "gt.events",
		tables.PropertyChange{Set: map[string]string{"mink.group-tags": "audit-*"}})
	require.NoError(t, err)
	require.Equal(t, "audit-*", tb.Properties["mink.group-tags"])
	require.Eventually(t, func() bool {
		tbl, err := cat.LoadTable(ctx, table.Identifier{"gt", "events"})
		return err == nil && tbl.Metadata().SnapshotByName("group.billing") == nil && tbl.Metadata().SnapshotByID(moved) == nil &&
			tbl.Metadata().Properties()["mink.group-tags"] == "audit-*"
	}, 9*time.Second, 100*time.Millisecond, "tag group.billing removed")
	t.Logf("removed after %v", time.Since(began).Round(time.Millisecond))
	require.Equal(t, 3.0, metricValue(t, env.Nodes[0].URL(), `mink_group_tag_commits_total{table="gt.events"}`),
		"set, moved, removed: one metadata commit each")
}

// checkGroupTag waits until the table's ref group.billing names a snapshot
// cut at want (its mink.group-offsets summary), other than the snapshot
// before, and checks with iceberg-go that the snapshot holds exactly the
// records of each partition below cut, that it is a tag off main, and
// that before left the metadata. It returns the tagged snapshot's id.
func checkGroupTag(t *testing.T, cat *rest.Catalog, want string, cut map[int32]int64, before int64) int64 {
	t.Helper()
	ctx := context.Background()
	var tbl *table.Table
	var snap *table.Snapshot
	require.Eventually(t, func() bool {
		var err error
		if tbl, err = cat.LoadTable(ctx, table.Identifier{"gt", "events"}); err != nil {
			return false
		}
		snap = tbl.Metadata().SnapshotByName("group.billing")
		return snap != nil && snap.Summary != nil && snap.Summary.Properties["mink.group-offsets"] == want
	}, 9*time.Second, 100*time.Millisecond, "tag group.billing at %s", want)
	md := tbl.Metadata()
	for name, ref := range md.Refs() {
		if name == "group.billing" {
			require.Equal(t, table.TagRef, ref.SnapshotRefType)
		}
	}
	require.NotEqual(t, md.CurrentSnapshot().SnapshotID, snap.SnapshotID, "the tag's snapshot is not main's")
	require.NotNil(t, snap.ParentSnapshotID)
	require.NotNil(t, md.SnapshotByID(*snap.ParentSnapshotID), "its parent, main's snapshot it extends, is in the metadata")
	if before != 0 {
		require.NotEqual(t, before, snap.SnapshotID)
		require.Nil(t, md.SnapshotByID(before), "the tag moved: its old snapshot left the metadata")
	}

	// Server-side planning of the tag (off main: from its manifests) lists
	// the files iceberg-go's own planning does.
	plannedAt := func(id int64, mode table.ScanPlanningMode) []string {
		tasks, err := tbl.Scan(table.WithSnapshotID(id), table.WithScanPlanningMode(mode)).PlanFiles(ctx)
		require.NoError(t, err)
		var paths []string
		for _, task := range tasks {
			paths = append(paths, task.File.FilePath())
		}
		slices.Sort(paths)
		return paths
	}
	local := plannedAt(snap.SnapshotID, table.ScanPlanningLocal)
	require.NotEmpty(t, local)
	require.Equal(t, local, plannedAt(snap.SnapshotID, table.ScanPlanningRemote), "the tag planned by the server")

	// The snapshot is its change against its parent: it ADDs exactly its
	// files the parent lacks and DELETEs the parent's it lacks, so an
	// incremental read from the parent returns only the rows it adds; its
	// operation and summary say so.
	parent := plannedAt(*snap.ParentSnapshotID, table.ScanPlanningLocal)
	fsys, err := tbl.FS(ctx)
	require.NoError(t, err)
	mans, err := snap.Manifests(fsys)
	require.NoError(t, err)
	var added, deleted []string
	var addedRecords int64
	for _, m := range mans {
		for e, err := range m.Entries(fsys, false) {
			require.NoError(t, err)
			if e.SnapshotID() != snap.SnapshotID {
				continue
			}
			switch e.Status() {
			case iceberg.EntryStatusADDED:
				added, addedRecords = append(added, e.DataFile().FilePath()), addedRecords+e.DataFile().Count()
			case iceberg.EntryStatusDELETED:
				deleted = append(deleted, e.DataFile().FilePath())
			}
		}
	}
	minus := func(a, b []string) []string {
		var out []string
		for _, p := range a {
			if !slices.Contains(b, p) {
				out = append(out, p)
			}
		}
		return out
	}
	slices.Sort(added)
	slices.Sort(deleted)
	require.Equal(t, minus(local, parent), added, "added: the tag's files its parent lacks")
	require.Equal(t, minus(parent, local), deleted, "deleted: the parent's files the tag lacks")
	op := map[[2]bool]table.Operation{{false, false}: table.OpReplace, {true, false}: table.OpAppend,
		{false, true}: table.OpDelete, {true, true}: table.OpOverwrite}[[2]bool{len(added) > 0, len(deleted) > 0}]
	require.Equal(t, op, snap.Summary.Operation)
	if len(added) > 0 {
		require.Equal(t, fmt.Sprint(addedRecords), snap.Summary.Properties["added-records"])
	}
	t.Logf("tag snapshot: %s, %d files added, %d deleted", op, len(added), len(deleted))

	at, err := tbl.Scan(table.WithSnapshotID(snap.SnapshotID)).ToArrowTable(ctx)
	require.NoError(t, err)
	defer at.Release()
	got := map[int32][]int64{}
	kIdx := at.Schema().FieldIndices("_kafka")[0]
	vIdx := at.Schema().FieldIndices("value")[0]
	vals := at.Column(vIdx).Data().Chunks()
	for c, chunk := range at.Column(kIdx).Data().Chunks() {
		st := chunk.(*array.Struct)
		ps, os := st.Field(0).(*array.Int32), st.Field(1).(*array.Int64)
		for i := 0; i < st.Len(); i++ {
			p, o := ps.Value(i), os.Value(i)
			require.Equal(t, fmt.Sprintf("%d:%d", p, o), string(vals[c].(*array.Binary).Value(i)))
			got[p] = append(got[p], o)
		}
	}
	for p, end := range cut {
		slices.Sort(got[p])
		var exp []int64
		for o := range end {
			exp = append(exp, o)
		}
		require.Equal(t, exp, got[p], "partition %d: exactly the records below %d", p, end)
	}
	require.Len(t, got, countNonZero(cut), "no other partition")
	require.Equal(t, fmt.Sprint(at.NumRows()), snap.Summary.Properties["total-records"], "the totals are the tag's")
	return snap.SnapshotID
}

func countNonZero(m map[int32]int64) int {
	n := 0
	for _, v := range m {
		if v > 0 {
			n++
		}
	}
	return n
}
