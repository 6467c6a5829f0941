package rangefile_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/objects"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/tables"
)

func TestMain(m *testing.M) { testkit.MainPostgres(m) }

// The builder rebuilds a data file byte for byte from Kafka, and refuses
// one whose recorded checksum differs.
func TestBuilderRebuildsRecordedBytes(t *testing.T) {
	f := testkit.NewFixture(t, 2, tables.Definition{Namespace: "t", Name: "j", Topic: "j", ValueFormat: "json",
		Schema: json.RawMessage(devenv.EarthquakesSchema)})
	var built = map[string][]byte{}
	ix := indexer.New(f.Pool, f.Client, indexer.Config{FlushInterval: 50 * time.Millisecond,
		OnBuilt: func(key string, b []byte) { built[key] = b }})
	l := f.Take(t, tables.PartitionScope(f.Table.ID, 1), "node-a")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx, l) }()
	f.ProduceTo(t, 1, `{"id":"a","properties":{"mag":1,"time":1700000000000}}`, `not json`,
		`{"id":"b","properties":{"mag":2.5,"time":"2023-11-14T22:13:20Z"}}`)
	testkit.WaitFor(t, "range", func() bool {
		var end int64
		require.NoError(t, f.Pool.QueryRow(context.Background(),
			`SELECT coalesce(max(end_offset), 0) FROM ranges WHERE table_id = $1 AND partition = 1`, f.Table.ID).Scan(&end))
		return end == 3
	})
	cancel()
	require.NoError(t, <-done)

	key := f.Table.DataFileKey(1, 0, 3, datafile.EncoderVersion)
	dlq, err := tables.DLQ(context.Background(), f.Pool, f.Table.ID)
	require.NoError(t, err)
	dlqKey := dlq.DataFileKey(1, 0, 3, datafile.EncoderVersion)
	require.Contains(t, built, key)
	require.Contains(t, built, dlqKey)

	b := rangefile.NewBuilder(f.Pool, f.Client, nil)
	got, err := b.Build(context.Background(), key)
	require.NoError(t, err)
	require.Equal(t, built[key], got, "rebuild is byte-identical")
	got, err = b.Build(context.Background(), dlqKey)
	require.NoError(t, err)
	require.Equal(t, built[dlqKey], got, "dead-letter rebuild is byte-identical")

	_, err = b.Build(context.Background(), f.Table.DataFileKey(1, 3, 9, datafile.EncoderVersion))
	require.ErrorIs(t, err, objects.ErrNotFound)

	_, err = f.Pool.Exec(context.Background(), `UPDATE data_files SET sha256 = '\x00' WHERE path = $1`, key)
	require.NoError(t, err)
	_, err = b.Build(context.Background(), key)
	require.ErrorIs(t, err, objects.ErrChecksumMismatch)
}
