package commit

import (
	"context"
	_ "embed"

	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/tables"
)

//go:embed sql/committed_offsets.sql
var committedOffsetsSQL string

// CommittedOffsets returns the committed offset of each partition of table
// t (not a dead-letter table), by partition: the offset below which every
// record is in the current snapshot of t or of its dead-letter table dlq,
// the lesser of their content ends (docs/design.md §4.4). A load of either
// table returns a snapshot that holds at least this much; it is the
// "committed offset" of the admin API and `mink table status`.
func CommittedOffsets(ctx context.Context, q tables.Querier, t, dlq *tables.Table) (map[int32]int64, error) {
	return leastContentEnds(ctx, q, []int64{t.ID, dlq.ID}, t.ID)
}

// CommittedOffsetsOf is CommittedOffsets of many tables in one statement:
// by table id (a key of dlqs), the committed offset of each of its
// partitions. dlqs maps each table id to its dead-letter table's id; a
// table without partitions has no entry. For a view of every table at
// once (the admin API's overview), whose cost must not grow a statement
// per table.
func CommittedOffsetsOf(ctx context.Context, q tables.Querier, dlqs map[int64]int64) (map[int64]map[int32]int64, error) {
	srcs, ids := make([]int64, 0, 2*len(dlqs)), make([]int64, 0, 2*len(dlqs))
	for t, dlq := range dlqs {
		srcs, ids = append(srcs, t, t), append(ids, t, dlq)
	}
	return contentEnds(ctx, q, srcs, ids)
}

// leastContentEnds runs committed_offsets.sql: per partition of the table
// src, the least content end of the tables ids.
func leastContentEnds(ctx context.Context, q tables.Querier, ids []int64, src int64) (map[int32]int64, error) {
	srcs := make([]int64, len(ids))
	for i := range srcs {
		srcs[i] = src
	}
	ends, err := contentEnds(ctx, q, srcs, ids)
	if err != nil {
		return nil, err
	}
	if e, ok := ends[src]; ok {
		return e, nil
	}
	return map[int32]int64{}, nil
}

// contentEnds runs committed_offsets.sql over the pairs (srcs[i], ids[i]):
// by source table, per partition, the least content end of the tables
// paired with it.
func contentEnds(ctx context.Context, q tables.Querier, srcs, ids []int64) (map[int64]map[int32]int64, error) {
	rows, err := q.Query(ctx, committedOffsetsSQL, srcs, ids)
	if err != nil {
		return nil, err
	}
	out := map[int64]map[int32]int64{}
	var src, offset int64
	var p int32
	_, err = pgx.ForEachRow(rows, []any{&src, &p, &offset}, func() error {
		if out[src] == nil {
			out[src] = map[int32]int64{}
		}
		out[src][p] = offset
		return nil
	})
	return out, err
}

// OffsetsByPartition reads rows of (partition, offset) into a map and
// closes rows.
func OffsetsByPartition(rows pgx.Rows) (map[int32]int64, error) {
	offsets := map[int32]int64{}
	var p int32
	var offset int64
	_, err := pgx.ForEachRow(rows, []any{&p, &offset}, func() error {
		offsets[p] = offset
		return nil
	})
	return offsets, err
}
