package writer

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/tables"
)

// claimKeys gives each file of added a key no file of t ever had: the next
// generation of its range when the plain key was used (docs/design.md
// §4.5: a path names one content forever). It returns the files as a
// commit adds them.
func claimKeys(ctx context.Context, tx pgx.Tx, t *tables.Table, added []*commit.DataFile) ([]icebergmeta.AddedFile, error) {
	out := make([]icebergmeta.AddedFile, len(added))
	for i, f := range added {
		used := false
		if err := tx.QueryRow(ctx, dataFileKeyUsedSQL, f.Key(t)).Scan(&used); err != nil {
			return nil, err
		}
		if used {
			if err := tx.QueryRow(ctx, dataFileNextGenerationSQL, t.ID, f.Partition, f.Start, datafile.EncoderVersion).Scan(&f.Generation); err != nil {
				return nil, err
			}
		}
		out[i] = f.Added(t)
	}
	return out, nil
}

// swapDataFiles records in t's data_files rows what snapshot snapshotID
// changed: the rows of removed (keys) leave, added come in as committed by
// it. Removed rows go first (one live row per table, partition and start);
// a removed key that is no longer live is commit.ErrConcurrentCommit.
func swapDataFiles(ctx context.Context, tx pgx.Tx, t *tables.Table, snapshotID int64, removed []string, added []*commit.DataFile) error {
	if len(removed) > 0 {
		tag, err := tx.Exec(ctx, dataFilesRemoveSQL, t.ID, snapshotID, removed)
		if err != nil {
			return err
		}
		if n := tag.RowsAffected(); n != int64(len(removed)) {
			return fmt.Errorf("%w: %d of %d data files of %s to remove were no longer live",
				commit.ErrConcurrentCommit, int64(len(removed))-n, len(removed), t.FullName())
		}
	}
	for _, f := range added {
		f.CommittedSnapshotID = &snapshotID
		if err := commit.InsertDataFile(ctx, tx, t, f); err != nil {
			return err
		}
	}
	return nil
}
