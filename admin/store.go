package admin

import (
	"context"
	_ "embed"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/tables"
)

// The admin API's queries, one file each under sql/. Table definitions are
// read and written through package tables, committed offsets through
// package commit.
var (
	//go:embed sql/partitions.sql
	partitionsSQL string
	//go:embed sql/writer_lease.sql
	writerLeaseSQL string
	//go:embed sql/unknown_fields.sql
	unknownFieldsSQL string
	//go:embed sql/dead_letters.sql
	deadLettersSQL string
	//go:embed sql/nodes_live.sql
	nodesLiveSQL string
	//go:embed sql/leases.sql
	leasesSQL string
	//go:embed sql/node_address.sql
	nodeAddressSQL string
	//go:embed sql/nodes_summary.sql
	nodesSummarySQL string
	//go:embed sql/db_now.sql
	dbNowSQL string
	//go:embed sql/table_files.sql
	tableFilesSQL string
	//go:embed sql/last_commit.sql
	lastCommitSQL string
	//go:embed sql/history.sql
	historySQL string
	//go:embed sql/refs.sql
	refsSQL string
)

// snapshotRead is the transaction a read of the overview or of a
// table's progress runs in: one database snapshot, so that indexed and
// committed offsets agree and every expiry compares with one now().
var snapshotRead = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// readProgress returns the progress of each partition of t as Postgres
// knows it (Kafka's offsets left at 0), read in one database snapshot. A
// dead-letter table owns no partitions: it has none.
func readProgress(ctx context.Context, db tables.Beginner, t *tables.Table) ([]PartitionStatus, error) {
	var parts map[int64][]PartitionStatus
	err := pgx.BeginTxFunc(ctx, db, snapshotRead, func(tx pgx.Tx) error {
		dlqs := map[int64]int64{t.ID: t.ID} // a dead-letter table has no partitions to end
		if t.DLQOf == nil {
			var err error
			if dlqs, err = readDLQ(ctx, tx, t); err != nil {
				return err
			}
		}
		var err error
		parts, err = readPartitions(ctx, tx, dlqs)
		return err
	})
	return parts[t.ID], err
}

// readDLQ returns the dead-letter table's id of t (not a dead-letter
// table), by t's id: the argument of readStatuses and readPartitions for t
// alone. Errors: tables.ErrNotFound.
func readDLQ(ctx context.Context, q tables.Querier, t *tables.Table) (map[int64]int64, error) {
	dlq, err := tables.DLQ(ctx, q, t.ID)
	if err != nil {
		return nil, err
	}
	return map[int64]int64{t.ID: dlq.ID}, nil
}

// readPartitions returns the progress of each partition of the tables
// dlqs names (by table id, the id of its dead-letter table), by table id
// then by partition, as Postgres knows it (Kafka's offsets left at 0), in
// two statements whatever the number of tables. q should be a
// snapshotRead transaction. A table without partitions (a dead-letter
// table) has no entry: its answer has always said null.
func readPartitions(ctx context.Context, q tables.Querier, dlqs map[int64]int64) (map[int64][]PartitionStatus, error) {
	ids := slices.Collect(maps.Keys(dlqs))
	dlqIDs := make([]int64, len(ids))
	for i, id := range ids {
		dlqIDs[i] = dlqs[id]
	}
	rows, err := q.Query(ctx, partitionsSQL, ids, dlqIDs)
	if err != nil {
		return nil, err
	}
	type row struct {
		table int64
		PartitionStatus
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var s row
		err := r.Scan(&s.table, &s.Partition, &s.IndexedOffset, &s.Holder, &s.LeaseExpiresAt, &s.Epoch, &s.RecordsPerSecond)
		return s, err
	})
	if err != nil || len(all) == 0 {
		return nil, err
	}
	committed, err := commit.CommittedOffsetsOf(ctx, q, dlqs)
	if err != nil {
		return nil, err
	}
	parts := map[int64][]PartitionStatus{}
	for _, r := range all {
		r.CommittedOffset = committed[r.table][r.Partition]
		parts[r.table] = append(parts[r.table], r.PartitionStatus)
	}
	return parts, nil
}

// withKafkaOffsets sets in parts Kafka's offsets of each partition and the
// lag of its indexer (last stable offset − indexed offset, at least 0).
// Partitions offs does not have keep zeros.
func withKafkaOffsets(parts []PartitionStatus, offs map[int32]kafka.Offsets) {
	for i := range parts {
		if o, ok := offs[parts[i].Partition]; ok {
			parts[i].LogStartOffset, parts[i].LastStable, parts[i].HighWatermark = o.LogStart, o.LastStable, o.HighWatermark
			parts[i].Lag = max(0, o.LastStable-parts[i].IndexedOffset)
		}
	}
}

// readWriters returns the holding of the writer lease of the tables ids,
// by table id; a table whose lease is free has no entry.
func readWriters(ctx context.Context, q tables.Querier, ids []int64) (map[int64]*WriterStatus, error) {
	out := map[int64]*WriterStatus{}
	err := queryEach(ctx, q, writerLeaseSQL, func(r pgx.Row) error {
		var id int64
		var w WriterStatus
		if err := r.Scan(&id, &w.Holder, &w.Epoch, &w.ExpiresAt); err != nil {
			return err
		}
		out[id] = &w
		return nil
	}, ids)
	return out, err
}

// partitionUnknownFields is one partition's row of unknown_fields.
type partitionUnknownFields struct {
	count    int64
	examples []string
}

// readUnknownFields returns the unknown JSON fields of the partitions of
// the tables ids, by table id, then by partition.
func readUnknownFields(ctx context.Context, q tables.Querier, ids []int64) (map[int64][]partitionUnknownFields, error) {
	out := map[int64][]partitionUnknownFields{}
	err := queryEach(ctx, q, unknownFieldsSQL, func(r pgx.Row) error {
		var id int64
		var u partitionUnknownFields
		if err := r.Scan(&id, &u.count, &u.examples); err != nil {
			return err
		}
		out[id] = append(out[id], u)
		return nil
	}, ids)
	return out, err
}

// maxUnknownExamples bounds UnknownFieldsStatus.Examples (as each
// partition's examples are bounded).
const maxUnknownExamples = 10

// mergeUnknownFields sums the partitions' counts and keeps the first
// maxUnknownExamples distinct examples, in partition order.
func mergeUnknownFields(parts []partitionUnknownFields) UnknownFieldsStatus {
	st := UnknownFieldsStatus{Examples: []string{}}
	for _, p := range parts {
		st.Count += p.count
		for _, e := range p.examples {
			if len(st.Examples) < maxUnknownExamples && !slices.Contains(st.Examples, e) {
				st.Examples = append(st.Examples, e)
			}
		}
	}
	return st
}

// readDeadLetters returns the number of rows in the current snapshot of
// the dead-letter table of each table of dlqs (by table id, the id of its
// dead-letter table), by table id; a table without any has no entry.
func readDeadLetters(ctx context.Context, q tables.Querier, dlqs map[int64]int64) (map[int64]int64, error) {
	ids := slices.Collect(maps.Keys(dlqs))
	dlqIDs := make([]int64, len(ids))
	for i, id := range ids {
		dlqIDs[i] = dlqs[id]
	}
	out := map[int64]int64{}
	err := queryEach(ctx, q, deadLettersSQL, func(r pgx.Row) error {
		var id, n int64
		if err := r.Scan(&id, &n); err != nil {
			return err
		}
		out[id] = n
		return nil
	}, ids, dlqIDs)
	return out, err
}

// readFiles returns the number and bytes of the data files of the
// current snapshot of each of the tables ids, by table id; a table without
// any has no entry.
func readFiles(ctx context.Context, q tables.Querier, ids []int64) (map[int64]FilesStatus, error) {
	out := map[int64]FilesStatus{}
	err := queryEach(ctx, q, tableFilesSQL, func(r pgx.Row) error {
		var id int64
		var f FilesStatus
		if err := r.Scan(&id, &f.Count, &f.Bytes); err != nil {
			return err
		}
		out[id] = f
		return nil
	}, ids)
	return out, err
}

// readLastCommits returns the current snapshot of each of the tables
// ids, by table id; a table before its first commit has no entry.
func readLastCommits(ctx context.Context, q tables.Querier, ids []int64) (map[int64]*CommitStatus, error) {
	out := map[int64]*CommitStatus{}
	err := queryEach(ctx, q, lastCommitSQL, func(r pgx.Row) error {
		var id int64
		var c CommitStatus
		var writer *string
		if err := r.Scan(&id, &c.SnapshotID, &c.SequenceNumber, &c.Operation, &c.CommittedAt, &writer); err != nil {
			return err
		}
		if writer != nil {
			c.Writer = *writer
		}
		out[id] = &c
		return nil
	}, ids)
	return out, err
}

// readHistories returns, by table id, how far back each table's history
// reaches and its refs other than main: two statements over every table
// of ids. A table without a snapshot has none.
func readHistories(ctx context.Context, q tables.Querier, ids []int64) (map[int64]*HistoryStatus, error) {
	out := map[int64]*HistoryStatus{}
	err := queryEach(ctx, q, historySQL, func(r pgx.Row) error {
		var id int64
		var h HistoryStatus
		var oldest *int64
		if err := r.Scan(&id, &h.Snapshots, &oldest); err != nil {
			return err
		}
		if oldest != nil {
			t := time.UnixMilli(*oldest).UTC()
			h.OldestAt = &t
		}
		h.Refs = []RefStatus{}
		out[id] = &h
		return nil
	}, ids)
	if err != nil {
		return nil, err
	}
	err = queryEach(ctx, q, refsSQL, func(r pgx.Row) error {
		var id, ms int64
		ref := RefStatus{Type: "tag"}
		if err := r.Scan(&id, &ref.Name, &ref.SnapshotID, &ms, &ref.Records); err != nil {
			return err
		}
		ref.Timestamp = time.UnixMilli(ms).UTC()
		if h := out[id]; h != nil { // a tag's row is counted above: always there
			h.Refs = append(h.Refs, ref)
		}
		return nil
	}, ids)
	return out, err
}

// queryEach runs sql with args and calls each with every row.
func queryEach(ctx context.Context, q tables.Querier, sql string, each func(pgx.Row) error, args ...any) error {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// readNodeSummaries returns the database clock's now and the live nodes,
// by id. q should be a snapshotRead transaction, so that the expiries
// compare with that now.
func readNodeSummaries(ctx context.Context, q tables.Querier) (now time.Time, nodes []NodeSummary, err error) {
	if err := q.QueryRow(ctx, dbNowSQL).Scan(&now); err != nil {
		return now, nil, err
	}
	nodes, err = query(ctx, q, nodesSummarySQL, func(r pgx.Row, n *NodeSummary) error {
		var tables []string
		var epochs []int64
		if err := r.Scan(&n.ID, &n.AdvertiseURL, &n.Roles, &n.StartedAt, &n.ExpiresAt, &n.PartitionLeases, &tables, &epochs); err != nil {
			return err
		}
		n.WriterOf = make([]WriterOf, len(tables))
		for i := range tables {
			n.WriterOf[i] = WriterOf{Table: tables[i], Epoch: epochs[i]}
		}
		return nil
	})
	return now, nodes, err
}

// readNodes returns the live nodes, by id.
func readNodes(ctx context.Context, q tables.Querier) (*NodeList, error) {
	nodes, err := query(ctx, q, nodesLiveSQL, func(r pgx.Row, n *NodeStatus) error {
		return r.Scan(&n.ID, &n.AdvertiseURL, &n.Roles, &n.ExpiresAt, &n.Leases)
	})
	return &NodeList{Nodes: nodes}, err
}

// readLeases returns every lease, by table name, the writer lease first.
func readLeases(ctx context.Context, q tables.Querier) (*LeaseList, error) {
	leases, err := query(ctx, q, leasesSQL, func(r pgx.Row, l *LeaseStatus) error {
		return r.Scan(&l.Scope, &l.Table, &l.Kind, &l.Partition, &l.Holder, &l.Epoch, &l.ExpiresAt)
	})
	return &LeaseList{Leases: leases}, err
}

// query runs sql with args and reads each row into a T with scan. No rows
// is an empty slice, not nil (the answers say [], not null).
func query[T any](ctx context.Context, q tables.Querier, sql string, scan func(pgx.Row, *T) error, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) {
		var v T
		err := scan(r, &v)
		return v, err
	})
}

// readNodeAddress returns the advertised URL of the live node id. Errors:
// pgx.ErrNoRows when no live node has the id.
func readNodeAddress(ctx context.Context, q tables.Querier, id string) (string, error) {
	var addr string
	err := q.QueryRow(ctx, nodeAddressSQL, id).Scan(&addr)
	return addr, err
}
