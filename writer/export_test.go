package writer

import (
	"context"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/tables"
)

// ExpireBelowLogStart is expireBelowLogStart, for tests that choose the
// log start offsets.
func (w *Writer) ExpireBelowLogStart(ctx context.Context, l cluster.Lease, t *tables.Table, offs map[int32]kafka.Offsets) error {
	return w.expireBelowLogStart(ctx, l, t, t, offs)
}

// Collect is collect (docs/design.md §4.6) of t.
func (w *Writer) Collect(ctx context.Context, l cluster.Lease, t *tables.Table) error {
	return w.collect(ctx, l, t)
}

// RowsRemovedSince runs rows_removed_since.sql: whether the snapshots of
// table id after sequence number from up to to may have removed rows.
func RowsRemovedSince(ctx context.Context, q tables.Querier, id, from, to int64) (bool, error) {
	var removed bool
	err := q.QueryRow(ctx, rowsRemovedSinceSQL, id, from, to).Scan(&removed)
	return removed, err
}
