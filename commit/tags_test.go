package commit_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
)

// TestStoreTagsRecordsChange: a tagged snapshot's row holds its operation
// against its parent (a tag that drops a file of main's is a delete) and
// every manifest its list names, main's manifest it carries over
// included, so that collection keeps that one while the tag lists it
// (docs/design.md §4.8).
func TestStoreTagsRecordsChange(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "g", Topic: "g", ValueFormat: "raw"})
	tbl := f.Table
	lease := f.Take(t, tables.WriterScope(tbl.ID), "n")
	file := func(start, end int64) icebergmeta.AddedFile {
		return icebergmeta.AddedFile{Path: fmt.Sprintf("%s/data/0/%d-%d-1.parquet", tbl.Location, start, end),
			FileSize: 100, Stats: datafile.Stats{RecordCount: end - start}}
	}
	a, b := file(0, 10), file(10, 20)
	var first *icebergmeta.CommitResult
	for _, added := range []icebergmeta.AddedFile{a, b} {
		require.NoError(t, commit.InLock(ctx, f.Pool, tbl, tbl, func(tx pgx.Tx, h *commit.Head) error {
			res, err := commit.Append(ctx, tx, h, &lease, nil, []icebergmeta.AddedFile{added})
			if first == nil {
				first = res
			}
			return err
		}))
	}

	var res *icebergmeta.TagsResult
	require.NoError(t, commit.InLock(ctx, f.Pool, tbl, tbl, func(tx pgx.Tx, h *commit.Head) error {
		md, err := h.Parsed()
		if err != nil {
			return err
		}
		res, err = icebergmeta.SetTags(ctx, icebergmeta.TagsInput{Metadata: h.Metadata, MetadataLocation: h.MetadataLocation,
			Parsed: md, Now: h.Now, Read: commit.Reader(tx),
			Set: []icebergmeta.Tag{{Name: "group.x", SnapshotID: 77, Files: []icebergmeta.AddedFile{a}}}})
		if err != nil {
			return err
		}
		return commit.StoreTags(ctx, tx, h, lease, res, map[string][]commit.TagFile{
			"group.x": {{Key: tables.Key(a.Path), Start: 0, End: 10, Size: 100, SHA256: []byte{0}}}})
	}))

	var op string
	var manifests []string
	require.NoError(t, f.Pool.QueryRow(ctx, `SELECT operation, manifests FROM snapshots WHERE table_id = $1 AND snapshot_id = 77`,
		tbl.ID).Scan(&op, &manifests))
	require.Equal(t, "delete", op, "the tag drops b of its parent")
	require.Len(t, manifests, 2, "b's manifest rewritten, a's carried over")
	require.Regexp(t, `-t0-m1\.avro$`, manifests[0])
	require.Equal(t, tables.Key(first.Manifests[0]), manifests[1], "main's manifest of a")
	for _, m := range res.Snapshots[0].Manifests {
		var n int
		require.NoError(t, f.Pool.QueryRow(ctx, `SELECT count(*) FROM metadata_files WHERE path = $1`, tables.Key(m)).Scan(&n))
		require.Equal(t, 1, n, "%s is stored", m)
	}
}
