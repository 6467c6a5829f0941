package tables

import (
	"context"
	_ "embed"
	"time"

	"github.com/jackc/pgx/v5"
)

// The statements on metadata_files that more than one package runs: a
// table's creation and every commit store files, the commits and the S3 API
// read them by key.
var (
	//go:embed sql/metadata_file.sql
	metadataFileSQL string
	//go:embed sql/metadata_file_insert.sql
	metadataFileInsertSQL string
)

// MetadataFile is a stored metadata file: metadata JSON, a manifest list or
// a manifest. It never changes once written.
type MetadataFile struct {
	Content []byte
	// CreatedAt is when it was stored, by the database clock.
	CreatedAt time.Time
}

// ReadMetadataFile returns the metadata file at key (below the warehouse:
// Key of its location). Errors: pgx.ErrNoRows when no file has the key.
func ReadMetadataFile(ctx context.Context, q Querier, key string) (MetadataFile, error) {
	var f MetadataFile
	err := q.QueryRow(ctx, metadataFileSQL, key).Scan(&f.Content, &f.CreatedAt)
	return f, err
}

// InsertMetadataFile stores content as the metadata file at key (below the
// warehouse: Key of its location) of table tableID, in tx.
func InsertMetadataFile(ctx context.Context, tx pgx.Tx, tableID int64, key string, content []byte) error {
	_, err := tx.Exec(ctx, metadataFileInsertSQL, key, tableID, content)
	return err
}
