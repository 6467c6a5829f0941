package commit

import (
	_ "embed"

	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
)

var (
	//go:embed sql/tag_snapshot_insert.sql
	tagSnapshotInsertSQL string
	//go:embed sql/tag_files_insert.sql
	tagFilesInsertSQL string
)

// TagFile is a data file a tagged snapshot lists (docs/design.md §4.8).
type TagFile struct {
	Key        string
	Partition  int32
	Start, End int64
	Size       int64
	SHA256     []byte
}

// StoreTags makes res (icebergmeta.SetTags on h) the head of h's table in
// tx, which holds the row lock (Lock), for the writer of lease: a row per
// tagged snapshot (ref_name, its operation against its parent, its
// manifests: new and the parent's it carries over, so that collection keeps
// those while it lists them; with the lease the fencing trigger checks)
// with the files it lists (files, by tag name), the snapshots res removed
// marked expired, the metadata files, and the swap of the metadata
// location with the new last sequence number; the current snapshot does
// not change. h then describes the new head.
//
// Errors: pgstore.ErrFenced (wrapped) for a stale epoch;
// ErrConcurrentCommit when the location is not h's.
func StoreTags(ctx context.Context, tx pgx.Tx, h *Head, lease cluster.Lease, res *icebergmeta.TagsResult, files map[string][]TagFile) error {
	for _, s := range res.Snapshots {
		manifests := make([]string, len(s.Manifests))
		for i, m := range s.Manifests {
			manifests[i] = tables.Key(m)
		}
		if _, err := tx.Exec(ctx, tagSnapshotInsertSQL, h.Table.ID, s.SnapshotID, s.ParentID, s.SequenceNumber,
			s.ManifestList, res.MetadataLocation, lease.Scope, lease.Holder, lease.Epoch, manifests, s.Name,
			s.TimestampMs, s.TotalRecords, string(s.Operation)); err != nil {
			return pgstore.Fenced(err)
		}
		fs := files[s.Name]
		keys, parts, starts, ends, sizes, sums := make([]string, len(fs)), make([]int32, len(fs)), make([]int64, len(fs)),
			make([]int64, len(fs)), make([]int64, len(fs)), make([][]byte, len(fs))
		for i, f := range fs {
			keys[i], parts[i], starts[i], ends[i], sizes[i], sums[i] = f.Key, f.Partition, f.Start, f.End, f.Size, f.SHA256
		}
		if _, err := tx.Exec(ctx, tagFilesInsertSQL, h.Table.ID, s.SnapshotID, keys, parts, starts, ends, sizes, sums); err != nil {
			return err
		}
	}
	if err := swapHead(ctx, tx, h, res.Expired, res.Files, res.MetadataLocation, res.Metadata, h.CurrentSnapshotID, res.LastSequenceNumber); err != nil {
		return fmt.Errorf("tags of %s: %w", h.Table.FullName(), err)
	}
	h.MetadataLocation, h.Metadata, h.LastSequenceNumber = res.MetadataLocation, res.Metadata, res.LastSequenceNumber
	parsed.put(res.MetadataLocation, res.Parsed)
	return nil
}
