package commit

import (
	"context"
	_ "embed"

	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
)

//go:embed sql/data_file_insert.sql
var dataFileInsertSQL string

// DataFile is a data_files row to insert: the data file of an indexed range
// (docs/design.md §4.3), or a file the writer's expiry rebuilt from Kafka
// (§4.6). It is encoded by this node's encoder version under its table's
// schema version Schema.
type DataFile struct {
	Partition  int32
	Start, End int64
	// Generation is 0 for a range's first file; a rebuild of the same range
	// and encoder version has the next one (tables.Table.DataFileKeyGen).
	Generation int
	// Schema is the version of the table's schema (of the table it holds
	// the dead letters of, for a dead-letter file) the file was encoded
	// with (docs/design.md §4.7).
	Schema int
	File   *datafile.File
	// CommittedSnapshotID is the snapshot that adds the file; nil for an
	// indexed range's file, which the writer commits later.
	CommittedSnapshotID *int64
}

// Key is f's key in t.
func (f *DataFile) Key(t *tables.Table) string {
	return t.DataFileKeyOf(tables.DataFileRef{Partition: f.Partition, Start: f.Start, End: f.End,
		Version: datafile.EncoderVersion, Schema: f.Schema, Generation: f.Generation})
}

// Added is f as a data file to add in a commit of t.
func (f *DataFile) Added(t *tables.Table) icebergmeta.AddedFile {
	return icebergmeta.AddedFile{Path: t.WarehouseLocation() + f.Key(t), Partition: f.Partition, FileSize: int64(len(f.File.Bytes)), Stats: f.File.Stats}
}

// InsertDataFile records f as a data file of t in tx. The caller's
// transaction carries the fencing: the indexer's inserts the range under
// its partition lease, the writer's stores the snapshot under its lease.
func InsertDataFile(ctx context.Context, tx pgx.Tx, t *tables.Table, f *DataFile) error {
	d := f.File
	sk, err := d.Sketches.MarshalBinary()
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, dataFileInsertSQL, t.ID, f.Partition, f.Start, f.End, datafile.EncoderVersion, f.Schema,
		f.Key(t), len(d.Bytes), d.SHA256[:], d.Stats.RecordCount, d.Stats,
		pgstore.Timestamptz(d.Stats.MinTimestamp), pgstore.Timestamptz(d.Stats.MaxTimestamp),
		f.CommittedSnapshotID, f.Generation, sk)
	return err
}
