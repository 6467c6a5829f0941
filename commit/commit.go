// Package commit is what every commit to a table's snapshot chain shares
// (docs/design.md §4.4 and §4.6): reading the table's head under its row
// lock, storing a new snapshot as the head, the per-partition content ends,
// tail data files, and building the data file of an offset range.
//
// Two kinds of committers use it. The table's writer commits indexed data
// files (append) and replaces tail files by them (replace); its snapshots
// carry its lease and are fenced by the epoch (docs/design.md §3.2). A table load on
// any node commits tail data files built from Kafka past the table's content
// end (append), so that the snapshot it hands out is part of the table's
// history; a load holds no lease. Both lock the table's row (SELECT … FOR
// NO KEY UPDATE) before they read the head they build on, so a table's commits form
// one chain: each snapshot's parent is the snapshot current when its
// transaction took the lock, every sequence number is the last one plus one,
// and no snapshot a reader was handed leaves the lineage (only expiry, which
// removes the oldest part of the history, takes it out).
//
// A table's content end of a partition is the offset below which every
// record with a row in the table is in its current snapshot. Commits move it
// forward in their transaction (content_ends); a table load extends the
// table from there to Kafka's last stable offset.
package commit

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
)

var (
	//go:embed sql/head_lock.sql
	headLockSQL string
	//go:embed sql/head_read.sql
	headReadSQL string
	//go:embed sql/content_ends_set.sql
	contentEndsSetSQL string
	//go:embed sql/snapshot_insert.sql
	snapshotInsertSQL string
	//go:embed sql/snapshots_expire.sql
	snapshotsExpireSQL string
	//go:embed sql/head_swap.sql
	headSwapSQL string
	//go:embed sql/tail_file_insert.sql
	tailFileInsertSQL string
	//go:embed sql/tail_files_live.sql
	tailFilesLiveSQL string
	//go:embed sql/tail_files_remove.sql
	tailFilesRemoveSQL string
)

// ErrConcurrentCommit is returned by Store when the table's metadata
// location is not the head the commit built on. Under the row lock (Lock)
// it cannot happen; it guards against a caller that built on a head read
// without it.
var ErrConcurrentCommit = errors.New("commit: metadata location changed during commit")

// Head is a table's committed state as one database snapshot saw it.
type Head struct {
	// Table is the table (possibly a dead-letter table); Source the table
	// whose topic and partitions it has (Table itself, or the parent of a
	// dead-letter table).
	Table, Source *tables.Table
	// MetadataLocation and Metadata are the current metadata file.
	MetadataLocation string
	Metadata         []byte
	// CurrentSnapshotID is nil before the first snapshot.
	CurrentSnapshotID *int64
	// LastSequenceNumber is the sequence number of the last snapshot (0
	// before the first).
	LastSequenceNumber int64
	// Now is the database clock when the head was read; commits stamp
	// snapshots with it.
	Now time.Time
	// Ends are the content ends per partition (see the package doc).
	Ends map[int32]int64
	// SchemaID is the table's newest schema version: a commit adds the
	// versions its metadata does not list yet (docs/design.md §4.7).
	SchemaID int
}

// Lock locks t's row in tx (FOR NO KEY UPDATE, held until tx ends) and reads its
// head. Every commit calls it before building on the head. src is the table
// that owns t's partitions (t itself, or the parent of a dead-letter table).
func Lock(ctx context.Context, tx pgx.Tx, t, src *tables.Table) (*Head, error) {
	return readHead(ctx, tx, headLockSQL, t, src)
}

// Read reads t's head without locking it, in one repeatable-read
// transaction: to plan a commit, or to answer a load that needs none.
func Read(ctx context.Context, db tables.Beginner, t, src *tables.Table) (*Head, error) {
	tx, err := db.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	h, err := ReadIn(ctx, tx, t, src)
	if err != nil {
		return nil, err
	}
	return h, tx.Commit(ctx)
}

// ReadIn reads t's head without locking it, in the caller's transaction
// (whose database snapshot the caller's other reads share).
func ReadIn(ctx context.Context, q tables.Querier, t, src *tables.Table) (*Head, error) {
	return readHead(ctx, q, headReadSQL, t, src)
}

func readHead(ctx context.Context, tx tables.Querier, query string, t, src *tables.Table) (*Head, error) {
	h := &Head{Table: t, Source: src}
	if err := tx.QueryRow(ctx, query, t.ID).Scan(&h.MetadataLocation, &h.CurrentSnapshotID, &h.LastSequenceNumber, &h.Now, &h.SchemaID); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("commit: %s: %w", t.FullName(), tables.ErrNotFound)
		}
		return nil, err
	}
	var err error
	if h.Metadata, err = ReadFile(ctx, tx, h.MetadataLocation); err != nil {
		return nil, err
	}
	if h.Ends, err = leastContentEnds(ctx, tx, []int64{t.ID}, src.ID); err != nil {
		return nil, err
	}
	return h, nil
}

// ReadFile returns the content of the metadata file at location (s3://…
// or a key below the warehouse). A missing file is an error wrapping
// pgx.ErrNoRows.
func ReadFile(ctx context.Context, q tables.Querier, location string) ([]byte, error) {
	f, err := tables.ReadMetadataFile(ctx, q, tables.Key(location))
	if err != nil {
		return nil, fmt.Errorf("commit: metadata file %s: %w", location, err)
	}
	return f.Content, nil
}

// Reader returns an icebergmeta.ReadFunc over q.
func Reader(q tables.Querier) icebergmeta.ReadFunc {
	return func(ctx context.Context, location string) ([]byte, error) { return ReadFile(ctx, q, location) }
}

// Store makes res the head of h's table in tx, which holds the row lock
// (Lock): the snapshot row (with the writer's lease, which the fencing
// trigger checks, or none for a table load), the expired snapshots, the
// commit's metadata files, and the swap of the table's metadata location.
// h then describes the new head. op is the snapshot's operation (append,
// replace, delete, overwrite).
//
// Errors: pgstore.ErrFenced (wrapped) for a stale lease epoch;
// ErrConcurrentCommit when the location is not h's; an error when res does
// not take the next sequence number.
func Store(ctx context.Context, tx pgx.Tx, h *Head, lease *cluster.Lease, op string, res *icebergmeta.CommitResult) error {
	if res.SequenceNumber != h.LastSequenceNumber+1 {
		return fmt.Errorf("commit: snapshot %d of %s has sequence number %d after %d",
			res.SnapshotID, h.Table.FullName(), res.SequenceNumber, h.LastSequenceNumber)
	}
	manifests := make([]string, len(res.Manifests))
	for i, m := range res.Manifests {
		manifests[i] = tables.Key(m)
	}
	var scope, holder *string
	var epoch *int64
	if lease != nil {
		scope, holder, epoch = &lease.Scope, &lease.Holder, &lease.Epoch
	}
	if _, err := tx.Exec(ctx, snapshotInsertSQL, h.Table.ID, res.SnapshotID, h.CurrentSnapshotID, res.SequenceNumber, op,
		res.ManifestList, res.MetadataLocation, scope, holder, epoch, manifests, res.TimestampMs, res.TotalRecords); err != nil {
		return pgstore.Fenced(err)
	}
	if err := swapHead(ctx, tx, h, res.Expired, res.Files, res.MetadataLocation, res.Metadata, &res.SnapshotID, res.SequenceNumber); err != nil {
		return err
	}
	id := res.SnapshotID
	h.MetadataLocation, h.Metadata, h.CurrentSnapshotID, h.LastSequenceNumber = res.MetadataLocation, res.Metadata, &id, res.SequenceNumber
	// Cached even if the transaction does not commit: the location is
	// never reused, so an entry nobody asks for only ages out.
	parsed.put(res.MetadataLocation, res.Parsed)
	return nil
}

// StoreMetadata makes upd the head of h's table in tx, which holds the
// row lock (Lock): a metadata file that adds no snapshot (statistics
// files, expiry; docs/design.md §4.6), stored with files (e.g. the Puffin
// file it names), the snapshots it expired marked so, and the swap of the
// table's metadata location. The caller's
// transaction carries the fencing. h then describes the new head.
//
// Errors: ErrConcurrentCommit when the location is not h's.
func StoreMetadata(ctx context.Context, tx pgx.Tx, h *Head, upd *icebergmeta.MetadataUpdate, files []icebergmeta.OutputFile) error {
	if err := swapHead(ctx, tx, h, upd.Expired, files, upd.MetadataLocation, upd.Metadata, h.CurrentSnapshotID, h.LastSequenceNumber); err != nil {
		return err
	}
	h.MetadataLocation, h.Metadata = upd.MetadataLocation, upd.Metadata
	parsed.put(upd.MetadataLocation, upd.Parsed)
	return nil
}

// swapHead ends a store in tx: it marks the expired snapshots so, stores
// the metadata files (files, then the metadata file at location), and
// swaps the table's metadata location from h's to location with current
// snapshot current and last sequence number seq. h is not changed.
//
// Errors: ErrConcurrentCommit when the location is not h's.
func swapHead(ctx context.Context, tx pgx.Tx, h *Head, expired []int64, files []icebergmeta.OutputFile,
	location string, metadata []byte, current *int64, seq int64) error {
	if len(expired) > 0 {
		if _, err := tx.Exec(ctx, snapshotsExpireSQL, h.Table.ID, expired); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := tables.InsertMetadataFile(ctx, tx, h.Table.ID, tables.Key(f.Location), f.Content); err != nil {
			return err
		}
	}
	if err := tables.InsertMetadataFile(ctx, tx, h.Table.ID, tables.Key(location), metadata); err != nil {
		return err
	}
	tag, err := tx.Exec(ctx, headSwapSQL, h.Table.ID, location, current, seq, h.MetadataLocation)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return ErrConcurrentCommit
	}
	return nil
}

// SetEnds moves h's content ends forward to ends in tx (a partition's end
// never goes back) and records them in h.
func SetEnds(ctx context.Context, tx pgx.Tx, h *Head, ends map[int32]int64) error {
	parts := make([]int32, 0, len(ends))
	offs := make([]int64, 0, len(ends))
	for p, e := range ends {
		if e > h.Ends[p] {
			parts, offs = append(parts, p), append(offs, e)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, contentEndsSetSQL, h.Table.ID, parts, offs); err != nil {
		return err
	}
	for i, p := range parts {
		h.Ends[p] = offs[i]
	}
	return nil
}

// TailFile is a tail data file: the data file of one offset range of a
// partition built from Kafka for a commit, outside the indexed ranges. Its
// key is the one an indexed range of the same offsets has (the same bytes).
type TailFile struct {
	Key        string
	Partition  int32
	Start, End int64
	Size       int64
	Records    int64
	Stats      datafile.Stats
	// Schema is the schema version of the source table the file was
	// encoded with (its key names it past version 0).
	Schema int
	// File holds the bytes when the file was built in this process (nil
	// for a file read back from Postgres).
	File *datafile.File
	// CommittedSnapshotID is the snapshot that added a file read back
	// from Postgres.
	CommittedSnapshotID int64
}

// Added is f as a data file to add in a commit of t.
func (f *TailFile) Added(t *tables.Table) icebergmeta.AddedFile {
	return icebergmeta.AddedFile{Path: t.WarehouseLocation() + f.Key, Partition: f.Partition, FileSize: f.Size, Stats: f.Stats}
}

// InsertTailFiles records files as committed by snapshotID in tx. Each must
// have been built in this process (File set).
func InsertTailFiles(ctx context.Context, tx pgx.Tx, t *tables.Table, snapshotID int64, files []*TailFile) error {
	for _, f := range files {
		if f.File == nil {
			return fmt.Errorf("commit: tail file %s was not built here", f.Key)
		}
		sk, err := f.File.Sketches.MarshalBinary()
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, tailFileInsertSQL, f.Key, t.ID, f.Partition, f.Start, f.End, datafile.EncoderVersion,
			f.Size, f.File.SHA256[:], f.Records, f.Stats, snapshotID, sk); err != nil {
			return err
		}
	}
	return nil
}

// LiveTailFiles returns the tail files of t's current snapshot, by partition
// and offset.
func LiveTailFiles(ctx context.Context, q tables.Querier, t *tables.Table) ([]*TailFile, error) {
	rows, err := q.Query(ctx, tailFilesLiveSQL, t.ID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*TailFile, error) {
		f := &TailFile{}
		err := r.Scan(&f.Key, &f.Partition, &f.Start, &f.End, &f.Size, &f.Records, &f.Stats, &f.CommittedSnapshotID)
		return f, err
	})
}

// RemoveTailFiles marks the tail files keys of t removed by snapshotID in
// tx. It fails when one of them is not live (another commit removed it).
func RemoveTailFiles(ctx context.Context, tx pgx.Tx, t *tables.Table, snapshotID int64, keys []string) error {
	missed, err := Mark(ctx, tx, tailFilesRemoveSQL, keys, t.ID, snapshotID, keys)
	if err != nil {
		return err
	}
	if missed > 0 {
		return fmt.Errorf("%w: %d of %d tail files of %s were no longer live", ErrConcurrentCommit, missed, len(keys), t.FullName())
	}
	return nil
}

// Mark runs in tx a statement that changes the rows of files and returns
// the keys it changed (… RETURNING path), and returns how many of keys it
// did not change.
func Mark(ctx context.Context, tx pgx.Tx, query string, keys []string, args ...any) (missed int, err error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	done, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, err
	}
	return len(keys) - len(done), nil
}
