package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/cli"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/kafkatest"
	"github.com/minkhq/mink/internal/pgtest"
)

// TestRecordTimestampsExact produces records whose CreateTime lies outside
// what int64 nanoseconds hold (franz-go's Record.Timestamp wraps them) and
// at and past what Iceberg's int64 microseconds hold, to a json table, and
// reads the table back with iceberg-go through the REST catalog and the S3
// API: every _kafka.timestamp is the record's exact instant, equal to the
// same instant in a value column; the data file's bounds are exact; the
// record past the limit is a dead letter whose error names its raw value;
// Postgres keeps the file's timestamp range exactly (or NULL below what
// timestamptz holds) without stalling indexing; `mink scan` prints them.
func TestRecordTimestampsExact(t *testing.T) {
	ctx := context.Background()
	pgURL := pgtest.Schema(t)
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: 1, PostgresURL: pgURL, EphemeralPorts: true, LeaseTTL: 3 * time.Second})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	url := env.Nodes[0].URL()

	require.NoError(t, env.Kafka.CreateTopic("times", 1, nil))
	schema := `{"type":"struct","schema-id":0,"fields":[
		{"id":1,"name":"name","required":true,"type":"string"},
		{"id":2,"name":"at","required":false,"type":"timestamptz"}]}`
	require.NoError(t, devenv.CreateTable(ctx, url, map[string]any{
		"namespace": "test", "name": "times", "topic": "times", "value_format": "json",
		"schema": json.RawMessage(schema),
	}))
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...))
	require.NoError(t, err)
	defer cl.Close()

	const (
		y9999    = 253402300799999  // 9999-12-31T23:59:59.999Z
		y2262    = 9223372036855    // 2262-04-11T23:47:16.855Z
		largest  = 9223372036854775 // the largest ms Iceberg holds
		smallest = -9223372036854775
	)
	type rec struct {
		name   string
		millis int64
	}
	batches := [][]rec{
		{{"none", -1}, {"epoch", 0}, {"y9999", y9999}},
		{{"y2262", y2262}, {"largest", largest}, {"past", largest + 1}, {"smallest", smallest}},
	}
	for i, b := range batches {
		var recs []kafkatest.Record
		for _, r := range b {
			v := fmt.Sprintf(`{"name":%q,"at":%d}`, r.name, r.millis)
			if r.name == "past" {
				v = `{"name":"past","at":0}` // only the record's timestamp is bad
			}
			recs = append(recs, kafkatest.Record{Millis: r.millis, Value: []byte(v)})
		}
		codec := kgo.NoCompression()
		if i == 1 {
			codec = kgo.GzipCompression()
		}
		_, err := kafkatest.ProduceBatch(ctx, cl, "times", 0, kafkatest.Batch{Compression: codec}, recs...)
		require.NoError(t, err)
	}
	clustertest.WaitCaughtUp(t, url, "test.times")

	// Rows: _kafka.timestamp is the record's instant, exactly.
	at := clustertest.ScanAll(t, url, "test.times")
	want := map[string]int64{"none": -1000, "epoch": 0, "y9999": y9999 * 1000, "y2262": y2262 * 1000,
		"largest": largest * 1000, "smallest": smallest * 1000}
	got := map[string]int64{}
	names, ts, tt, vals := clustertest.Column(t, at, "name"), clustertest.Column(t, at, "_kafka", "timestamp"), clustertest.Column(t, at, "_kafka", "timestamp_type"), clustertest.Column(t, at, "at")
	for c := range names {
		require.Equal(t, arrow.Microsecond, ts[c].DataType().(*arrow.TimestampType).Unit)
		for i := 0; i < names[c].Len(); i++ {
			n := names[c].(*array.String).Value(i)
			got[n] = int64(ts[c].(*array.Timestamp).Value(i))
			require.Equal(t, got[n], int64(vals[c].(*array.Timestamp).Value(i)), "%s: value column holds the same instant", n)
			require.EqualValues(t, 0, tt[c].(*array.Int32).Value(i))
		}
	}
	require.Equal(t, want, got)

	// The data file's statistics, as iceberg-go reads them from the manifest.
	rc, err := rest.NewCatalog(ctx, "mink", url)
	require.NoError(t, err)
	tbl, err := rc.LoadTable(ctx, table.Identifier{"test", "times"})
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	require.Len(t, tasks, 1)
	le := func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) }
	df := tasks[0].File
	require.Equal(t, int64(smallest*1000), le(df.LowerBoundValues()[codec.TimestampFieldID]))
	require.Equal(t, int64(largest*1000), le(df.UpperBoundValues()[codec.TimestampFieldID]))
	require.Equal(t, int64(smallest*1000), le(df.LowerBoundValues()[codec.FirstValueFieldID+1]), "at")
	require.Equal(t, int64(largest*1000), le(df.UpperBoundValues()[codec.FirstValueFieldID+1]), "at")
	require.EqualValues(t, 6, df.Count())

	// The dead letter: Kafka's "no timestamp" in _kafka, the raw value in
	// the error.
	dt := clustertest.ScanAll(t, url, "test.times~dlq")
	require.EqualValues(t, 1, dt.NumRows())
	require.EqualValues(t, 5, clustertest.Column(t, dt, "_kafka", "offset")[0].(*array.Int64).Value(0))
	require.EqualValues(t, -1000, clustertest.Column(t, dt, "_kafka", "timestamp")[0].(*array.Timestamp).Value(0))
	require.EqualValues(t, -1, clustertest.Column(t, dt, "_kafka", "timestamp_type")[0].(*array.Int32).Value(0))
	require.Equal(t, `{"name":"past","at":0}`, string(clustertest.Column(t, dt, "value")[0].(*array.Binary).Value(0)))
	require.Equal(t, "timestamp 9223372036854776 ms (timestamp type 0) is outside what an Iceberg timestamptz holds "+
		"(int64 microseconds: -9223372036854775..9223372036854775 ms)", clustertest.Column(t, dt, "error")[0].(*array.String).Value(0))

	// Postgres: the file's range exactly, NULL below what timestamptz holds.
	pool, err := pgxpool.New(ctx, pgURL)
	require.NoError(t, err)
	defer pool.Close()
	var minTS, maxTS *time.Time
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT f.min_timestamp, f.max_timestamp FROM data_files f JOIN tables t ON t.id = f.table_id
		WHERE t.name = 'times'`).Scan(&minTS, &maxTS))
	require.Nil(t, minTS)
	require.NotNil(t, maxTS)
	require.Equal(t, int64(largest*1000), maxTS.UnixMicro())

	// mink scan prints the exact instants (columns in the order asked).
	var out, errOut bytes.Buffer
	require.Zero(t, cli.Main([]string{"scan", "test.times", "--admin", url, "--format", "csv",
		"--columns", "_kafka.timestamp,name"}, &out, &errOut), errOut.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.ElementsMatch(t, []string{
		"1969-12-31T23:59:59.999Z,none", "1970-01-01T00:00:00Z,epoch", "9999-12-31T23:59:59.999Z,y9999",
		"2262-04-11T23:47:16.855Z,y2262", "+294247-01-10T04:00:54.775Z,largest", "-290308-12-21T19:59:05.225Z,smallest",
	}, lines[1:])
}
