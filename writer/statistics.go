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
)

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
func (w *Writer) statistics(ctx context.Context, l cluster.Lease, t *tables.Table) (bool, error) {
	src, err := tables.Source(ctx, w.pool, t)
	if err != nil {
		return false, err
	}
	sf, puffinFile, err := w.buildStatistics(ctx, t, src)
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
func (w *Writer) buildStatistics(ctx context.Context, t, src *tables.Table) (*table.StatisticsFile, *icebergmeta.OutputFile, error) {
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
	unions := make(map[int]*theta.Union, len(fields))
	for _, id := range fields {
		if unions[id], err = theta.NewUnion(theta.WithUnionLgK(datafile.SketchLgK), theta.WithUnionSeed(datafile.SketchSeed)); err != nil {
			return nil, nil, err
		}
	}
	rows, err := tx.Query(ctx, liveSketchesSQL, t.ID)
	if err != nil {
		return nil, nil, err
	}
	var raw []byte
	missing := false
	if _, err := pgx.ForEachRow(rows, []any{&raw}, func() error {
		if raw == nil {
			missing = true
			return nil
		}
		sks, err := datafile.UnmarshalSketches(raw)
		if err != nil {
			return err
		}
		// A field a file has no sketch of is not in the schema version
		// it was encoded with: its values there are all null.
		for id, b := range sks {
			u := unions[id]
			if u == nil {
				continue // a field of a list or map element, or dropped
			}
			sk, err := theta.Decode(b, datafile.SketchSeed)
			if err != nil {
				return fmt.Errorf("field %d: %w", id, err)
			}
			if err := u.Update(sk); err != nil {
				return fmt.Errorf("field %d: %w", id, err)
			}
		}
		return nil
	}); err != nil {
		return nil, nil, fmt.Errorf("writer: statistics of %s: %w", t.FullName(), err)
	}
	if missing {
		return nil, nil, nil
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, nil, err
	}
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
