package commit

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
)

// InLock runs fn in a new transaction of db that holds t's row lock, on
// the head it read under the lock (Lock), and commits the transaction when
// fn returns nil; otherwise it rolls it back and returns fn's error. src
// is the table that owns t's partitions. Errors wrap pgstore.ErrFenced
// when the fencing trigger rejected a writer's epoch.
func InLock(ctx context.Context, db tables.Beginner, t, src *tables.Table, fn func(tx pgx.Tx, h *Head) error) error {
	return pgstore.Fenced(pgx.BeginTxFunc(ctx, db, pgx.TxOptions{}, func(tx pgx.Tx) error {
		h, err := Lock(ctx, tx, t, src)
		if err != nil {
			return err
		}
		return fn(tx, h)
	}))
}

// Append builds an append snapshot of added on h (icebergmeta.Append, the
// parent's manifests read through tx) and makes it the head (Store): new
// rows, committed by the writer (lease) or a table load (lease nil).
// summary marks the committer (icebergmeta.SummaryCommittedBy).
func Append(ctx context.Context, tx pgx.Tx, h *Head, lease *cluster.Lease, summary map[string]string,
	added []icebergmeta.AddedFile) (*icebergmeta.CommitResult, error) {
	md, err := h.Parsed()
	if err != nil {
		return nil, err
	}
	newer, err := newerSchemas(ctx, tx, h, md)
	if err != nil {
		return nil, err
	}
	res, err := icebergmeta.Append(ctx, icebergmeta.AppendInput{
		Metadata: h.Metadata, MetadataLocation: h.MetadataLocation, Parsed: md, Added: added,
		SnapshotID: icebergmeta.NewSnapshotID(), Now: h.Now, Read: Reader(tx), Summary: summary, Schemas: newer,
	})
	if err != nil {
		return nil, fmt.Errorf("commit: append snapshot of %s: %w", h.Table.FullName(), err)
	}
	return res, Store(ctx, tx, h, lease, "append", res)
}

// Change is a snapshot that removes data files of the current snapshot and
// may add others (icebergmeta.Rewrite): the writer's replace of tail files
// and its expiry.
type Change struct {
	// Op is the operation stored in the snapshot's row: "replace",
	// "overwrite" or "delete".
	Op string
	// Removed are the keys (below the warehouse) of the data files to
	// remove, at least one.
	Removed []string
	Added   []icebergmeta.AddedFile
	// Replace says the added files hold exactly the rows of the removed
	// ones (icebergmeta.RewriteInput.Replace).
	Replace bool
	// Expire are snapshots to expire in the same commit
	// (icebergmeta.RewriteInput.Expire).
	Expire []int64
}

// Rewrite builds the snapshot of c on h (icebergmeta.Rewrite, the parent's
// manifests read through tx) and makes it the head (Store), with the
// writer's lease and summary.
func Rewrite(ctx context.Context, tx pgx.Tx, h *Head, lease *cluster.Lease, summary map[string]string,
	c Change) (*icebergmeta.CommitResult, error) {
	md, err := h.Parsed()
	if err != nil {
		return nil, err
	}
	removed := make([]string, len(c.Removed))
	for i, k := range c.Removed {
		removed[i] = h.Table.WarehouseLocation() + k
	}
	newer, err := newerSchemas(ctx, tx, h, md)
	if err != nil {
		return nil, err
	}
	res, err := icebergmeta.Rewrite(ctx, icebergmeta.RewriteInput{
		Metadata: h.Metadata, MetadataLocation: h.MetadataLocation, Parsed: md, Removed: removed, Added: c.Added,
		Replace: c.Replace, SnapshotID: icebergmeta.NewSnapshotID(), Now: h.Now, Read: Reader(tx), Summary: summary,
		Schemas: newer, Expire: c.Expire,
	})
	if err != nil {
		return nil, fmt.Errorf("commit: %s snapshot of %s: %w", c.Op, h.Table.FullName(), err)
	}
	return res, Store(ctx, tx, h, lease, c.Op, res)
}

// newerSchemas returns the table's schema versions that the metadata md
// does not list yet (docs/design.md §4.7): every commit adds them, so the
// current schema follows the table's newest version.
func newerSchemas(ctx context.Context, tx pgx.Tx, h *Head, md table.Metadata) ([]*iceberg.Schema, error) {
	cur := md.CurrentSchema().ID
	if h.SchemaID <= cur {
		return nil, nil
	}
	return tables.SchemaVersions(ctx, tx, h.Table.ID, cur)
}
