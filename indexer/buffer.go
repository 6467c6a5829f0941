package indexer

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recordOverhead approximates the memory of one buffered record beyond its
// key and value (franz-go's Record, its headers slice, batch bookkeeping).
const recordOverhead = 200

// rangeBuffer holds the records a partition's indexer has read since it cut
// its last range: the next range (docs/design.md §4.3). Its methods decide
// when to cut; they touch nothing else (the indexer's shared memory count is
// the caller's).
type rangeBuffer struct {
	// records are the data and control records, in offset order.
	records []*kgo.Record
	// bytes are the records' keys and values, compared with
	// Config.RangeSize.
	bytes int64
	// cost is bytes plus recordOverhead per record: what the records count
	// against Config.MemoryBudget.
	cost int64
	// firstAt is when the first record came in; the flush interval runs
	// from it.
	firstAt time.Time
	// control is set when records holds a control record (a
	// transaction marker), which the cut leaves out of the files.
	control bool
}

// recordCost is what r counts against the memory budget.
func recordCost(r *kgo.Record) int64 { return int64(len(r.Key)+len(r.Value)) + recordOverhead }

// add appends r, read at now, and returns its cost.
func (b *rangeBuffer) add(r *kgo.Record, now time.Time) int64 {
	if len(b.records) == 0 {
		b.firstAt = now
	}
	cost := recordCost(r)
	b.records = append(b.records, r)
	b.control = b.control || r.Attrs.IsControl()
	b.bytes += int64(len(r.Key) + len(r.Value))
	b.cost += cost
	return cost
}

// overBudget reports whether the records held must be cut before a record
// of this cost comes in: the node's indexers hold buffered bytes (cost
// units, all partitions), and it would take them past budget. Cutting what
// this partition holds now, a smaller range, beats holding more. An empty
// buffer takes the record anyway: a range needs one.
func (b *rangeBuffer) overBudget(cost, buffered, budget int64) bool {
	return len(b.records) > 0 && buffered+cost > budget
}

// full reports whether the records reached the range size. The indexer
// checks it after every record, even in the middle of a fetch, so ranges
// (and the memory a build needs) stay near it.
func (b *rangeBuffer) full(rangeSize int64) bool { return b.bytes >= rangeSize }

// due reports whether the flush interval has passed at now since the first
// record held.
func (b *rangeBuffer) due(now time.Time, interval time.Duration) bool {
	return len(b.records) > 0 && now.Sub(b.firstAt) >= interval
}

// idleWait is how long a poll with nothing held waits: nothing is due
// until a record comes, so a caught-up partition's indexer wakes only this
// often (the partition's lag metric is set on each wake and each record).
const idleWait = time.Minute

// wait is how long the next fetch may wait for records at now: until the
// flush interval of the first record held ends (not positive: cut first),
// or idleWait when nothing is held.
func (b *rangeBuffer) wait(now time.Time, interval time.Duration) time.Duration {
	if len(b.records) == 0 {
		return idleWait
	}
	return b.firstAt.Add(interval).Sub(now)
}

// reset empties b after its records were cut into a range. The records
// slice keeps its capacity for the next range (a range of small records
// holds hundreds of thousands of pointers; growing it again each range is
// garbage), cleared so that the cut records can be collected.
func (b *rangeBuffer) reset() {
	clear(b.records)
	*b = rangeBuffer{records: b.records[:0]}
}
