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

// leastContentEnds runs committed_offsets.sql: per partition of the table
// src, the least content end of the tables ids.
func leastContentEnds(ctx context.Context, q tables.Querier, ids []int64, src int64) (map[int32]int64, error) {
	rows, err := q.Query(ctx, committedOffsetsSQL, ids, src)
	if err != nil {
		return nil, err
	}
	return OffsetsByPartition(rows)
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
