package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/apache/datasketches-go/theta"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/puffin"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/flights"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/writer"
)

// flightEvents returns the first n flight records as JSON values
// (flights.JSON; keyed by their row number), or skips the test when the
// data set is absent.
func flightEvents(t *testing.T, n int) []devenv.Event {
	path, ok := devenv.FindData(flights.File)
	if !ok {
		t.Skip(flights.File + " absent")
	}
	values, err := flights.JSON(path, n)
	require.NoError(t, err)
	out := make([]devenv.Event, len(values))
	for i, v := range values {
		out[i] = devenv.Event{ID: strconv.Itoa(i), Time: time.UnixMilli(1700000000000 + int64(i)), Value: v}
	}
	return out
}

// TestStatisticsNDV: the writer registers a Puffin statistics file for the
// current snapshot of a table of the USGS week feed and of one of 200,000
// flight records; iceberg-go loads it through the REST catalog, reads it
// through the S3 API, and each primitive column's
// apache-datasketches-theta-v1 blob, deserialized with datasketches-go,
// estimates the column's exact distinct count within 5%, with the ndv
// property equal to the rounded estimate.
func TestStatisticsNDV(t *testing.T) {
	ctx := context.Background()
	events := flightEvents(t, 200_000)
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: 1, PostgresURL: pgtest.Schema(t), EphemeralPorts: true,
		LeaseTTL: 3 * time.Second, StatisticsInterval: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	createEarthquakes(t, env, testkit.USGSEvents(t))
	createTable(t, env, 3, map[string]any{"namespace": "demo", "name": "flights", "topic": "flights",
		"value_format": "json", "key_format": "string", "schema": json.RawMessage(flights.Schema)})
	require.NoError(t, devenv.Produce(ctx, env.Brokers, "flights", events))
	clustertest.WaitCaughtUp(t, env.Nodes[0].URL(), "demo.flights")

	cat, err := rest.NewCatalog(ctx, "mink", env.Nodes[0].URL())
	require.NoError(t, err)
	for _, name := range []string{"earthquakes", "flights"} {
		t.Run(name, func(t *testing.T) {
			var tbl *table.Table
			var sf *table.StatisticsFile
			testkit.WaitFor(t, "statistics of the current snapshot", func() bool {
				if tbl, err = cat.LoadTable(ctx, table.Identifier{"demo", name}); err != nil {
					return false
				}
				cur := tbl.Metadata().CurrentSnapshot()
				for s := range tbl.Metadata().Statistics() {
					if cur != nil && s.SnapshotID == cur.SnapshotID && cur.Summary.Properties["total-records"] != "0" {
						sf = &s
						return true
					}
				}
				return false
			})
			fs, err := tbl.FS(ctx)
			require.NoError(t, err)
			fh, err := fs.Open(sf.StatisticsPath)
			require.NoError(t, err)
			content, err := io.ReadAll(fh)
			require.NoError(t, err)
			require.NoError(t, fh.Close())
			require.EqualValues(t, sf.FileSizeInBytes, len(content))
			pr, err := puffin.NewReader(bytes.NewReader(content))
			require.NoError(t, err)

			at, err := tbl.Scan(table.WithSnapshotID(sf.SnapshotID)).ToArrowTable(ctx)
			require.NoError(t, err)
			defer at.Release()
			sc := tbl.Metadata().CurrentSchema()
			exact := testkit.ExactDistinct(sc, at)
			fields := datafile.SketchedFields(sc)
			require.Len(t, pr.Blobs(), len(fields))
			require.Len(t, sf.BlobMetadata, len(fields))
			for i, bm := range pr.Blobs() {
				require.Equal(t, puffin.BlobTypeDataSketchesTheta, bm.Type)
				require.Equal(t, []int32{int32(fields[i])}, bm.Fields)
				require.Equal(t, sf.SnapshotID, bm.SnapshotID)
				require.Equal(t, tbl.Metadata().SnapshotByID(sf.SnapshotID).SequenceNumber, bm.SequenceNumber)
				require.Nil(t, bm.CompressionCodec)
				require.Equal(t, bm.Fields, sf.BlobMetadata[i].Fields)
				require.Equal(t, bm.Properties, sf.BlobMetadata[i].Properties)
				raw, err := pr.ReadBlobByMetadata(bm)
				require.NoError(t, err)
				sk, err := theta.Decode(raw, theta.DefaultSeed)
				require.NoError(t, err)
				require.Equal(t, uint8(3), raw[1], "serial version 3 (uncompressed compact sketch)")
				est := sk.Estimate()
				id := fields[i]
				want := exact[id]
				require.Equal(t, strconv.FormatInt(int64(math.Round(est)), 10), bm.Properties[writer.NDVProperty], "field %d", id)
				col, _ := sc.FindColumnName(id)
				t.Logf("field %d (%s): exact %d, estimate %.0f", id, col, want, est)
				require.InDelta(t, float64(want), est, 0.05*float64(want)+1e-9, "field %d (%s)", id, col)
			}
		})
	}
}
