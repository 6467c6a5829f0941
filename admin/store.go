package admin

import (
	"context"
	_ "embed"
	"errors"
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
)

// readProgress returns the progress of each partition of t as Postgres
// knows it (Kafka's offsets left at 0), read in one database snapshot so
// that indexed and committed offsets agree. A dead-letter table owns no
// partitions: it has none.
func readProgress(ctx context.Context, db tables.Beginner, t *tables.Table) ([]PartitionStatus, error) {
	var parts []PartitionStatus
	err := pgx.BeginTxFunc(ctx, db, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, partitionsSQL, t.ID)
		if err != nil {
			return err
		}
		// nil, not empty, without partitions: the answer has always said null.
		parts, err = pgx.AppendRows([]PartitionStatus(nil), rows, func(r pgx.CollectableRow) (PartitionStatus, error) {
			var s PartitionStatus
			err := r.Scan(&s.Partition, &s.IndexedOffset, &s.Holder, &s.LeaseExpiresAt, &s.Epoch, &s.RecordsPerSecond)
			return s, err
		})
		if err != nil || len(parts) == 0 {
			return err
		}
		dlq, err := tables.DLQ(ctx, tx, t.ID)
		if err != nil {
			return err
		}
		committed, err := commit.CommittedOffsets(ctx, tx, t, dlq)
		if err != nil {
			return err
		}
		for i := range parts {
			parts[i].CommittedOffset = committed[parts[i].Partition]
		}
		return nil
	})
	return parts, err
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

// readWriter returns the holding of t's writer lease, or nil when it is free.
func readWriter(ctx context.Context, q tables.Querier, t *tables.Table) (*WriterStatus, error) {
	var w WriterStatus
	err := q.QueryRow(ctx, writerLeaseSQL, t.ID).Scan(&w.Holder, &w.Epoch, &w.ExpiresAt)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &w, nil
}

// partitionUnknownFields is one partition's row of unknown_fields.
type partitionUnknownFields struct {
	count    int64
	examples []string
}

// readUnknownFields returns the unknown JSON fields of t's partitions, by
// partition.
func readUnknownFields(ctx context.Context, q tables.Querier, t *tables.Table) ([]partitionUnknownFields, error) {
	return query(ctx, q, unknownFieldsSQL, func(r pgx.Row, u *partitionUnknownFields) error {
		return r.Scan(&u.count, &u.examples)
	}, t.ID)
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

// readDeadLetters returns the number of rows in the live data files of
// t's dead-letter table.
func readDeadLetters(ctx context.Context, q tables.Querier, t *tables.Table) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, deadLettersSQL, t.ID).Scan(&n)
	return n, err
}

// readFiles returns the number and bytes of the data files of t's current
// snapshot.
func readFiles(ctx context.Context, q tables.Querier, t *tables.Table) (FilesStatus, error) {
	var f FilesStatus
	err := q.QueryRow(ctx, tableFilesSQL, t.ID).Scan(&f.Count, &f.Bytes)
	return f, err
}

// readLastCommit returns t's current snapshot, or nil before its first
// commit.
func readLastCommit(ctx context.Context, q tables.Querier, t *tables.Table) (*CommitStatus, error) {
	var c CommitStatus
	var writer *string
	err := q.QueryRow(ctx, lastCommitSQL, t.ID).Scan(&c.SnapshotID, &c.SequenceNumber, &c.Operation, &c.CommittedAt, &writer)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if writer != nil {
		c.Writer = *writer
	}
	return &c, nil
}

// readNodeSummaries returns the database clock's now and the live nodes,
// by id, read in one transaction (so the expiries compare with that now).
func readNodeSummaries(ctx context.Context, db tables.Beginner) (now time.Time, nodes []NodeSummary, err error) {
	err = pgx.BeginTxFunc(ctx, db, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, dbNowSQL).Scan(&now); err != nil {
			return err
		}
		var err error
		nodes, err = query(ctx, tx, nodesSummarySQL, func(r pgx.Row, n *NodeSummary) error {
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
		return err
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
