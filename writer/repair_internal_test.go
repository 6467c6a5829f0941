package writer

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A range is repaired only when its table side is settled: t's file of the
// range committed (or none), its dead-letter file committed (or none), no
// tail file over it, no file of t over it
// with other offsets, and both content ends at or past its end.
func TestRepairRangeSettled(t *testing.T) {
	ends := map[int32]int64{0: 100}
	base := repairRange{partition: 0, start: 10, end: 20, dlqKey: "d", dlqRecords: 3, dlqCommitted: true, tableKey: "t", tableCommitted: true}
	for _, c := range []struct {
		name string
		edit func(*repairRange)
		dlq  map[int32]int64
		want bool
	}{
		{"committed", func(*repairRange) {}, ends, true},
		{"no table file", func(r *repairRange) { r.tableKey, r.tableCommitted = "", false }, ends, true},
		{"table file not committed yet", func(r *repairRange) { r.tableCommitted = false }, ends, false},
		{"no dead-letter file", func(r *repairRange) { r.dlqKey, r.dlqRecords, r.dlqCommitted = "", 0, false }, ends, true},
		{"dead-letter file not committed yet", func(r *repairRange) { r.dlqCommitted = false }, ends, false},
		{"tail file over it", func(r *repairRange) { r.tails = true }, ends, false},
		{"a table file with other offsets", func(r *repairRange) { r.misaligned = true }, ends, false},
		{"past the table's content end", func(r *repairRange) { r.end = 101 }, map[int32]int64{0: 200}, false},
		{"past the dead-letter table's content end", func(*repairRange) {}, map[int32]int64{0: 19}, false},
		{"a partition without content end", func(r *repairRange) { r.partition = 1 }, ends, false},
	} {
		r := base
		c.edit(&r)
		require.Equal(t, c.want, r.settled(ends, c.dlq), c.name)
	}
}
