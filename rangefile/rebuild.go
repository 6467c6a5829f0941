package rangefile

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/objects"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

var (
	//go:embed sql/file_checksum.sql
	fileChecksumSQL string
	//go:embed sql/data_file_mark_rebuild.sql
	dataFileMarkRebuildSQL string
)

// Builder rebuilds data files from Kafka on a cache miss (docs/design.md §4.5): it
// looks the file up, reads its range, encodes it, and checks the bytes
// against the recorded size and SHA-256. It implements objects.Builder.
type Builder struct {
	pool    *pgxpool.Pool
	kafka   *kafka.Client
	schemas *schemas.Store
}

// NewBuilder returns a Builder. sch gives the tables' schema versions
// (nil: a store of its own without a registry; a rebuild needs none: the
// writer schemas of an indexed range are stored).
func NewBuilder(pool *pgxpool.Pool, kc *kafka.Client, sch *schemas.Store) *Builder {
	if sch == nil {
		sch = schemas.NewStore(pool, nil)
	}
	return &Builder{pool: pool, kafka: kc, schemas: sch}
}

// Build returns the bytes of the data file at key. Errors wrap
// objects.ErrNotFound (no such file), objects.ErrChecksumMismatch (the
// rebuild differs; never served) or outage.ErrUnavailable (Postgres or
// Kafka unreachable).
func (b *Builder) Build(ctx context.Context, key string) ([]byte, error) {
	data, _, err := b.BuildSum(ctx, key)
	return data, err
}

// BuildSum is Build that also returns the SHA-256 of the bytes, checked
// against the recorded one (objects.SumBuilder: the ETag needs no second
// hash).
func (b *Builder) BuildSum(ctx context.Context, key string) ([]byte, [sha256.Size]byte, error) {
	var none [sha256.Size]byte
	ref, ok := tables.ParseDataFileKey(key)
	if !ok {
		return nil, none, fmt.Errorf("%w: %s is not a data file key", objects.ErrNotFound, key)
	}
	if ref.Version != datafile.EncoderVersion {
		// An upgrade changed the encoder: the writer re-encodes the table's
		// files under this version's keys (replace snapshots); a new load of
		// the table lists them.
		return nil, none, fmt.Errorf("%w: %s was encoded by encoder version %d and this node encodes version %d; the table's writer re-encodes it: load the table again",
			objects.ErrNotFound, key, ref.Version, datafile.EncoderVersion)
	}
	var tableID int64
	var size int64
	var sum []byte
	// A data file of an indexed range, or a tail file of a zero-lag load
	// (the same key holds the same bytes in both).
	err := b.pool.QueryRow(ctx, fileChecksumSQL, key).Scan(&tableID, &size, &sum)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, none, fmt.Errorf("%w: %s", objects.ErrNotFound, key)
	}
	if err != nil {
		return nil, none, pgstore.Unavailable(err)
	}
	t, err := tables.Get(ctx, b.pool, tableID)
	if err != nil {
		return nil, none, pgstore.Unavailable(err)
	}
	src, err := tables.Source(ctx, b.pool, t)
	if err != nil {
		return nil, none, pgstore.Unavailable(err)
	}
	built, err := Build(ctx, b.kafka, b.schemas, t, src, ref.Partition, ref.Start, ref.End, ref.Schema)
	if err != nil {
		return nil, none, pgstore.Unavailable(err)
	}
	if built == nil {
		b.markForRebuild(ctx, key)
		return nil, none, fmt.Errorf("%w: %s: the rebuild holds no rows (records below Kafka's log start or compacted away); the file is marked for re-indexing",
			objects.ErrChecksumMismatch, key)
	}
	f := built.File
	got := f.SHA256 // datafile.Build's hash of f.Bytes
	if int64(len(f.Bytes)) != size || !bytes.Equal(got[:], sum) {
		b.markForRebuild(ctx, key)
		return nil, none, fmt.Errorf("%w: %s: rebuilt %d bytes sha256 %x, recorded %d bytes sha256 %x (Kafka no longer holds the same records, e.g. after log compaction); the file is marked for re-indexing",
			objects.ErrChecksumMismatch, key, len(f.Bytes), got, size, sum)
	}
	return f.Bytes, got, nil
}

// markForRebuild flags the live data file at key for re-indexing by the
// table's writer (docs/design.md §4.5), which replaces it with an overwrite commit.
// Files no longer live (removed by a later snapshot, read by time travel)
// and tail files are left alone. Best effort: the read fails either way.
func (b *Builder) markForRebuild(ctx context.Context, key string) {
	_, _ = b.pool.Exec(context.WithoutCancel(ctx), dataFileMarkRebuildSQL, key)
}
