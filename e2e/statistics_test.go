package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/datasketches-go/theta"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/puffin"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/writer"
)

// flightsSchema is the schema of a json table of the flight records as
// flightEvents writes them (bench.FlightsSchema).
const flightsSchema = `{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"date","required":false,"type":"timestamptz"},
 {"id":2,"name":"delay","required":false,"type":"long"},
 {"id":3,"name":"distance","required":false,"type":"long"},
 {"id":4,"name":"origin","required":false,"type":"string"},
 {"id":5,"name":"destination","required":false,"type":"string"}]}`

// flightEvents returns the first n flight records as JSON values (keyed by
// their row number), or skips the test when the data set is absent.
func flightEvents(t *testing.T, n int) []devenv.Event {
	path, ok := devenv.FindData("flights-3m.parquet")
	if !ok {
		t.Skip("flights-3m.parquet absent")
	}
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	require.NoError(t, err)
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: int64(n)}, memory.DefaultAllocator)
	require.NoError(t, err)
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	require.NoError(t, err)
	defer rr.Release()
	require.True(t, rr.Next(), "%v", rr.Err())
	rec := rr.RecordBatch()
	str := func(a arrow.Array, i int) any {
		if a.IsNull(i) {
			return nil
		}
		return a.ValueStr(i)
	}
	num := func(a *array.Int64, i int) any {
		if a.IsNull(i) {
			return nil
		}
		return a.Value(i)
	}
	out := make([]devenv.Event, 0, n)
	for i := 0; i < int(rec.NumRows()) && len(out) < n; i++ {
		var date any
		if d := rec.Column(0).(*array.Timestamp); !d.IsNull(i) {
			date = time.UnixMicro(int64(d.Value(i))).UTC().Format(time.RFC3339Nano)
		}
		v, err := json.Marshal(map[string]any{"date": date, "delay": num(rec.Column(1).(*array.Int64), i),
			"distance": num(rec.Column(2).(*array.Int64), i), "origin": str(rec.Column(3), i), "destination": str(rec.Column(4), i)})
		require.NoError(t, err)
		out = append(out, devenv.Event{ID: strconv.Itoa(i), Time: time.UnixMilli(1700000000000 + int64(i)), Value: v})
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
	flights := flightEvents(t, 200_000)
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: 1, PostgresURL: pgtest.Schema(t), EphemeralPorts: true,
		LeaseTTL: 3 * time.Second, StatisticsInterval: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	createEarthquakes(t, env, testkit.USGSEvents(t))
	createTable(t, env, 3, map[string]any{"namespace": "demo", "name": "flights", "topic": "flights",
		"value_format": "json", "key_format": "string", "schema": json.RawMessage(flightsSchema)})
	require.NoError(t, devenv.Produce(ctx, env.Brokers, "flights", flights))
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
