package writer

import (
	"context"
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

var (
	//go:embed sql/tag_live_files.sql
	tagLiveFilesSQL string
	//go:embed sql/partition_starts.sql
	partitionStartsSQL string
	//go:embed sql/tag_files_exist.sql
	tagFilesExistSQL string
)

// Snapshot summary properties of a consumer-group tag's snapshot.
const (
	// SummaryGroup is the consumer group the snapshot is cut for.
	SummaryGroup = "mink.group"
	// SummaryGroupOffsets is the cut, "<partition>:<offset>,…" by
	// partition: the snapshot holds exactly the records below these
	// offsets (cutOf).
	SummaryGroupOffsets = "mink.group-offsets"
)

// groupTags is the writer's consumer-group tag duty (docs/design.md §4.8)
// for table t: for each consumer group that matches the table's
// mink.group-tags and has committed offsets on its topic, the tag
// group.<name> names a snapshot cut exactly at those offsets (cutOf),
// committed anew only when the cut moved; tags of groups no longer
// matched or gone are removed. It returns how many tags it set or
// removed. Errors wrap pgstore.ErrFenced for a stale epoch, and
// outage.ErrUnavailable when Kafka does not answer (then no tag moves or
// goes).
func (w *Writer) groupTags(ctx context.Context, l cluster.Lease, t *tables.Table) (int, error) {
	patterns := t.GroupTags()
	h, err := commit.Read(ctx, w.pool, t, t)
	if err != nil {
		return 0, err
	}
	md, err := h.Parsed()
	if err != nil {
		return 0, err
	}
	existing := groupTagRefs(md)
	if len(patterns) == 0 && len(existing) == 0 {
		return 0, nil
	}
	groups := map[string]map[int32]int64{}
	var offs map[int32]kafka.Offsets
	if len(patterns) > 0 {
		if offs, err = w.kafka.ListOffsets(ctx, t.Topic); err != nil {
			return 0, err
		}
		if groups, err = w.kafka.GroupOffsets(ctx, t.Topic, func(g string) bool { return tables.MatchGroup(patterns, g) }); err != nil {
			return 0, err
		}
	}
	starts, err := partitionStarts(ctx, w.pool, t.ID)
	if err != nil {
		return 0, err
	}
	type wanted struct {
		group string
		cut   map[int32]int64
	}
	var set []wanted
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		cut, err := cutOf(groups[g], starts, offs)
		if err != nil {
			return 0, fmt.Errorf("writer: tag of group %s on %s: %w", g, t.FullName(), err)
		}
		if s := existing[tables.GroupTagPrefix+g]; s != nil && s.Summary != nil && s.Summary.Properties[SummaryGroupOffsets] == formatCut(cut) {
			continue // the group has not moved
		}
		set = append(set, wanted{group: g, cut: cut})
	}
	var remove []string
	for _, name := range slices.Sorted(maps.Keys(existing)) {
		if _, ok := groups[strings.TrimPrefix(name, tables.GroupTagPrefix)]; !ok {
			remove = append(remove, name)
		}
	}
	if len(set) == 0 && len(remove) == 0 {
		return 0, nil
	}

	live, err := liveFiles(ctx, w.pool, t.ID)
	if err != nil {
		return 0, err
	}
	logStarts := map[int32]int64{}
	for p, o := range offs {
		logStarts[p] = o.LogStart
	}
	built := map[tagGap]*commit.TailFile{}
	var tags []icebergmeta.Tag
	files := map[string][]commit.TagFile{}
	var keys []string
	for _, s := range set {
		name := tables.GroupTagPrefix + s.group
		keep, gaps := planTag(live, s.cut, starts, logStarts)
		tg := icebergmeta.Tag{Name: name, SnapshotID: icebergmeta.NewSnapshotID(),
			Summary: map[string]string{icebergmeta.SummaryCommittedBy: icebergmeta.CommittedByWriter,
				SummaryGroup: s.group, SummaryGroupOffsets: formatCut(s.cut)}}
		for _, f := range keep {
			tg.Files = append(tg.Files, icebergmeta.AddedFile{Path: t.WarehouseLocation() + f.Key, Partition: f.Partition,
				FileSize: f.Size, Stats: f.Stats})
			files[name] = append(files[name], f.TagFile)
			keys = append(keys, f.Key)
		}
		for _, g := range gaps {
			f, ok := built[g]
			if !ok {
				// Built outside the row lock, as loads build their tails:
				// a gap is at most the unindexed end of a partition.
				if f, err = rangefile.Build(ctx, w.kafka, w.cfg.Schemas, t, t, g.partition, g.start, g.end, schemas.Choose); err != nil {
					return 0, err
				}
				built[g] = f
			}
			if f == nil {
				continue // no row of the table in the gap
			}
			tg.Files = append(tg.Files, f.Added(t))
			files[name] = append(files[name], commit.TagFile{Key: f.Key, Partition: f.Partition, Start: f.Start, End: f.End,
				Size: f.Size, SHA256: f.File.SHA256[:]})
		}
		tags = append(tags, tg)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)

	err = commit.InLock(ctx, w.pool, t, t, func(tx pgx.Tx, h *commit.Head) error {
		if _, err := tx.Exec(ctx, checkEpochSQL, l.Scope, l.Holder, l.Epoch); err != nil {
			return pgstore.Fenced(err)
		}
		var have int
		if err := tx.QueryRow(ctx, tagFilesExistSQL, t.ID, keys).Scan(&have); err != nil {
			return err
		}
		if have < len(keys) {
			return fmt.Errorf("%w: %d of %d files of the tags of %s were collected meanwhile",
				commit.ErrConcurrentCommit, len(keys)-have, len(keys), t.FullName())
		}
		md, err := h.Parsed()
		if err != nil {
			return err
		}
		// A commit of main may have expired a tagged snapshot (and its
		// tag) meanwhile: remove only the tags still there.
		cur := groupTagRefs(md)
		rm := slices.DeleteFunc(slices.Clone(remove), func(n string) bool { return cur[n] == nil })
		res, err := icebergmeta.SetTags(ctx, icebergmeta.TagsInput{Metadata: h.Metadata, MetadataLocation: h.MetadataLocation, Parsed: md,
			Set: tags, Remove: rm, Now: h.Now, Read: commit.Reader(tx)})
		if err != nil {
			return err
		}
		return commit.StoreTags(ctx, tx, h, l, res, files)
	})
	if err != nil {
		return 0, err
	}
	w.tagCommits.WithLabelValues(t.FullName()).Inc()
	w.cfg.Logger.Debug("writer: group tags", "table", t.FullName(), "set", len(tags), "removed", len(remove))
	return len(tags) + len(remove), nil
}

// groupTagRefs returns the consumer-group tags of md (tag refs named
// group.…) and the snapshots they name.
func groupTagRefs(md table.Metadata) map[string]*table.Snapshot {
	out := map[string]*table.Snapshot{}
	for name, ref := range md.Refs() {
		if ref.SnapshotRefType == table.TagRef && strings.HasPrefix(name, tables.GroupTagPrefix) {
			out[name] = md.SnapshotByID(ref.SnapshotID)
		}
	}
	return out
}

// cutOf returns where a consumer group's tag cuts each partition of the
// table (starts: the partitions' start offsets): its committed offset
// (the next record it will consume), at most the last stable offset (a
// commit past it would list records read_committed readers cannot see
// yet) and at least the partition's start; a partition the group has not
// committed on is cut at its start (the group holds none of its records).
// Errors: a partition whose offsets Kafka did not give.
func cutOf(committed, starts map[int32]int64, offs map[int32]kafka.Offsets) (map[int32]int64, error) {
	cut := make(map[int32]int64, len(starts))
	for p, start := range starts {
		c, ok := committed[p]
		if !ok {
			cut[p] = start
			continue
		}
		o, ok := offs[p]
		if !ok {
			return nil, fmt.Errorf("no offsets of partition %d", p)
		}
		cut[p] = max(min(c, o.LastStable), start)
	}
	return cut, nil
}

// formatCut is cut as "<partition>:<offset>,…" in partition order.
func formatCut(cut map[int32]int64) string {
	var b strings.Builder
	for i, p := range slices.Sorted(maps.Keys(cut)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(p)))
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(cut[p], 10))
	}
	return b.String()
}

// liveFile is a file of the table's current snapshot.
type liveFile struct {
	commit.TagFile
	Records int64
	Stats   datafile.Stats
}

// tagGap is a range of a partition a tag lists a tail file of.
type tagGap struct {
	partition  int32
	start, end int64
}

// planTag returns what a tagged snapshot cut at cut lists: of live (the
// current snapshot's files, by partition and offset), the files that end
// at or below the cut, and per partition the gap from the end of the last
// of them (or the partition's start, not below the log start: Kafka no
// longer has the records before) up to the cut, to be built as a tail
// file. The current snapshot holds every row below its content end, so
// the two together hold exactly the rows below the cut.
func planTag(live []liveFile, cut, starts, logStarts map[int32]int64) (keep []liveFile, gaps []tagGap) {
	end := map[int32]int64{}
	for _, f := range live {
		if c, ok := cut[f.Partition]; ok && f.End <= c {
			keep = append(keep, f)
			end[f.Partition] = max(end[f.Partition], f.End)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(cut)) {
		from, ok := end[p]
		if !ok {
			from = max(starts[p], logStarts[p])
		}
		if cut[p] > from {
			gaps = append(gaps, tagGap{partition: p, start: from, end: cut[p]})
		}
	}
	return keep, gaps
}

// liveFiles returns the files of table id's current snapshot, by
// partition and offset.
func liveFiles(ctx context.Context, q tables.Querier, id int64) ([]liveFile, error) {
	rows, err := q.Query(ctx, tagLiveFilesSQL, id)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (liveFile, error) {
		var f liveFile
		err := r.Scan(&f.Key, &f.Partition, &f.Start, &f.End, &f.Size, &f.SHA256, &f.Records, &f.Stats)
		return f, err
	})
}

// partitionStarts returns the start offsets of table id's partitions.
func partitionStarts(ctx context.Context, q tables.Querier, id int64) (map[int32]int64, error) {
	rows, err := q.Query(ctx, partitionStartsSQL, id)
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	var p int32
	var s int64
	_, err = pgx.ForEachRow(rows, []any{&p, &s}, func() error { out[p] = s; return nil })
	return out, err
}
