package writer

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/apache/datasketches-go/theta"
	"github.com/apache/iceberg-go/puffin"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/tables"
)

var (
	//go:embed sql/live_sketches.sql
	liveSketchesSQL string
	//go:embed sql/collect_statistics.sql
	collectStatisticsSQL string
	//go:embed sql/rows_removed_since.sql
	rowsRemovedSinceSQL string
)

// merged is the union of the sketches of one table's files the writer
// merged last: a later round merges only the files added since, unless a
// snapshot in between may have removed rows (a union cannot take values
// out). A replace keeps the rows it moves, so the files it removes leave
// the union exact.
type merged struct {
	seq    int64                // sequence number of the snapshot merged
	files  map[string]bool      // the keys merged
	unions map[int]*theta.Union // by field id
}

// mergedCache holds the merged sketches of a writer lease's tables (the
// table and its dead-letter table), by table id, for as long as Run holds
// the lease.
type mergedCache map[int64]*merged

// take removes and returns the merged sketches of table id: a round that
// fails starts from scratch next time.
func (c mergedCache) take(id int64) *merged {
	m := c[id]
	delete(c, id)
	return m
}

// PuffinCreatedBy is the created-by of Mink's Puffin files (Puffin spec,
// file properties).
const PuffinCreatedBy = "mink"

// NDVProperty is the blob property holding the distinct-count estimate,
// rounded (Puffin spec, apache-datasketches-theta-v1).
const NDVProperty = "ndv"

// statistics writes the Puffin statistics file of t's current snapshot
// (docs/design.md §4.6) when it has none: for each sketched field of the
// current schema (datafile.SketchedFields), the union of the sketches the
// snapshot's live files keep in Postgres — no data is read — as an
// apache-datasketches-theta-v1 blob, and registers it in the metadata's
// "statistics" with a metadata file that changes no snapshot. A snapshot
// with a file recorded before sketches were kept gets none. It reports
// whether it wrote one.
func (w *Writer) statistics(ctx context.Context, l cluster.Lease, t *tables.Table, cache mergedCache) (bool, error) {
	src, err := tables.Source(ctx, w.pool, t)
	if err != nil {
		return false, err
	}
	sf, puffinFile, err := w.buildStatistics(ctx, t, src, cache)
	if err != nil || sf == nil {
		return false, err
	}
	err = w.fencedTx(ctx, l, func(tx pgx.Tx) error {
		h, err := commit.Lock(ctx, tx, t, src)
		if err != nil {
			return err
		}
		md, err := h.Parsed()
		if err != nil {
			return err
		}
		upd, err := icebergmeta.SetStatistics(icebergmeta.StatisticsInput{Metadata: h.Metadata,
			MetadataLocation: h.MetadataLocation, Parsed: md, File: *sf})
		if err != nil {
			return err
		}
		return commit.StoreMetadata(ctx, tx, h, upd, []icebergmeta.OutputFile{*puffinFile})
	})
	if errors.Is(err, icebergmeta.ErrSnapshotGone) {
		return false, nil
	}
	return err == nil, err
}

// buildStatistics reads t's head and its live files' sketches in one
// database snapshot and returns the statistics file of the current
// snapshot and its content, or nil when there is nothing to write.
func (w *Writer) buildStatistics(ctx context.Context, t, src *tables.Table, cache mergedCache) (*table.StatisticsFile, *icebergmeta.OutputFile, error) {
	tx, err := w.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback(ctx)
	h, err := commit.ReadIn(ctx, tx, t, src)
	if err != nil || h.CurrentSnapshotID == nil {
		return nil, nil, err
	}
	md, err := h.Parsed()
	if err != nil {
		return nil, nil, err
	}
	snapID := *h.CurrentSnapshotID
	for s := range md.Statistics() {
		if s.SnapshotID == snapID {
			return nil, nil, nil
		}
	}
	snap := md.SnapshotByID(snapID)
	if snap == nil {
		return nil, nil, fmt.Errorf("writer: statistics of %s: current snapshot %d not in its metadata", t.FullName(), snapID)
	}
	fields := datafile.SketchedFields(md.CurrentSchema())
	m, err := merge(ctx, tx, t, snap.SequenceNumber, fields, cache.take(t.ID))
	if err != nil || m == nil {
		return nil, nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, nil, err
	}
	cache[t.ID] = m
	unions := m.unions
	var buf bytes.Buffer
	pw, err := puffin.NewWriter(&buf)
	if err != nil {
		return nil, nil, err
	}
	if err := pw.SetCreatedBy(PuffinCreatedBy); err != nil {
		return nil, nil, err
	}
	var blobs []table.BlobMetadata
	var blobsEnd int64 = puffin.MagicSize
	for _, id := range fields {
		sk, err := unions[id].OrderedResult()
		if err != nil {
			return nil, nil, err
		}
		// Uncompressed (serial version 3), as Iceberg Java writes and
		// every DataSketches reader reads.
		var b bytes.Buffer
		enc := theta.NewEncoder(&b, false)
		if err := enc.Encode(sk); err != nil {
			return nil, nil, err
		}
		ndv := strconv.FormatInt(int64(math.Round(sk.Estimate())), 10)
		bm, err := pw.AddBlob(puffin.BlobMetadataInput{Type: puffin.BlobTypeDataSketchesTheta, SnapshotID: snapID,
			SequenceNumber: snap.SequenceNumber, Fields: []int32{int32(id)}, Properties: map[string]string{NDVProperty: ndv}}, b.Bytes())
		if err != nil {
			return nil, nil, err
		}
		blobsEnd = bm.Offset + bm.Length
		blobs = append(blobs, table.BlobMetadata{Type: table.BlobType(bm.Type), SnapshotID: snapID,
			SequenceNumber: snap.SequenceNumber, Fields: []int32{int32(id)}, Properties: map[string]string{NDVProperty: ndv}})
	}
	if err := pw.Finish(); err != nil {
		return nil, nil, err
	}
	loc := icebergmeta.StatisticsLocation(md.Location(), snapID, uuid.New())
	sf := &table.StatisticsFile{SnapshotID: snapID, StatisticsPath: loc, FileSizeInBytes: int64(buf.Len()),
		FileFooterSizeInBytes: int64(buf.Len()) - blobsEnd, BlobMetadata: blobs}
	return sf, &icebergmeta.OutputFile{Location: loc, Content: buf.Bytes()}, nil
}

// merge returns the union of the sketches of t's live files for the
// snapshot of sequence number seq, read in tx: m (the previous round's
// union, or nil) plus the files added since when no snapshot in between
// may have removed rows, else all of them. It returns nil when a live file
// has no sketches (recorded before they were kept).
func merge(ctx context.Context, tx pgx.Tx, t *tables.Table, seq int64, fields []int, m *merged) (*merged, error) {
	if m != nil {
		var removed bool
		if err := tx.QueryRow(ctx, rowsRemovedSinceSQL, t.ID, m.seq, seq).Scan(&removed); err != nil {
			return nil, err
		}
		if removed || seq < m.seq {
			m = nil
		}
	}
	if m == nil {
		m = &merged{files: map[string]bool{}, unions: map[int]*theta.Union{}}
	}
	for _, id := range fields {
		if m.unions[id] == nil {
			u, err := theta.NewUnion(theta.WithUnionLgK(datafile.SketchLgK), theta.WithUnionSeed(datafile.SketchSeed))
			if err != nil {
				return nil, err
			}
			m.unions[id] = u
		}
	}
	known := make([]string, 0, len(m.files))
	for k := range m.files {
		known = append(known, k)
	}
	rows, err := tx.Query(ctx, liveSketchesSQL, t.ID, known)
	if err != nil {
		return nil, err
	}
	var key string
	var raw []byte
	var missing bool
	live := make(map[string]bool, len(m.files))
	anyMissing := false
	if _, err := pgx.ForEachRow(rows, []any{&key, &raw, &missing}, func() error {
		live[key] = true
		if missing {
			anyMissing = true
			return nil
		}
		if m.files[key] {
			return nil
		}
		sks, err := datafile.UnmarshalSketches(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		// A field a file has no sketch of is not in the schema version
		// it was encoded with: its values there are all null.
		for id, b := range sks {
			u := m.unions[id]
			if u == nil {
				continue // a field of a list or map element
			}
			sk, err := theta.Decode(b, datafile.SketchSeed)
			if err != nil {
				return fmt.Errorf("%s field %d: %w", key, id, err)
			}
			if err := u.Update(sk); err != nil {
				return fmt.Errorf("%s field %d: %w", key, id, err)
			}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("writer: statistics of %s: %w", t.FullName(), err)
	}
	if anyMissing {
		return nil, nil
	}
	m.seq, m.files = seq, live
	return m, nil
}
