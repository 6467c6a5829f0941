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
