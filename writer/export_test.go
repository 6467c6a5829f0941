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
