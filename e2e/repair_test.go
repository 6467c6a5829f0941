package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/internal/cli"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

// Issue #11, item 7, end to end: a json table whose schema lacks the field
// note, with unknown fields as dead letters. Records with a note
// accumulate in ~dlq; `mink table alter` adds note; `mink table repair`
// moves them into the table. Read through iceberg-go, the table and ~dlq
// together hold every produced offset exactly once, the repaired rows
// have their note, and ~dlq has none of them. A second repair has nothing
// to do; an alter Iceberg does not allow is refused with the reason; new
// records with a note go straight to the table.
func TestRepairAfterAlter(t *testing.T) {
	env := startEnv(t, 1)
	ctx := context.Background()
	url := env.Nodes[0].URL()
	c := &admin.Client{URL: url}
	createTable(t, env, 2, map[string]any{
		"namespace": "shop", "name": "notes", "topic": "notes", "value_format": "json",
		"schema": json.RawMessage(`{"type":"struct","fields":[
			{"id":1,"name":"id","type":"long","required":true},
			{"id":2,"name":"name","type":"string","required":false}]}`),
		"properties": map[string]string{"mink.json.unknown-fields": "dead-letter"},
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()

	// id → note ("" for none); every third record has one.
	notes := map[int64]string{}
	produce := func(from, to int) {
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			v := map[string]any{"id": i, "name": fmt.Sprintf("n%d", i)}
			notes[int64(i)] = ""
			if i%3 == 0 {
				v["note"] = fmt.Sprintf("note %d", i)
				notes[int64(i)] = v["note"].(string)
			}
			b, err := json.Marshal(v)
			require.NoError(t, err)
			recs = append(recs, &kgo.Record{Topic: "notes", Partition: int32(i % 2), Value: b})
		}
		require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
		clustertest.WaitCaughtUp(t, url, "shop.notes")
	}
	// Three rounds: several ranges per partition.
	produce(0, 30)
	produce(30, 60)
	produce(60, 90)

	type row struct {
		id   int64
		note *string
	}
	// read returns the rows of a table by (partition, offset), and of a
	// dead-letter table the ids in its values.
	read := func(name string) map[pk]row {
		at := clustertest.ScanAll(t, url, name)
		out := map[pk]row{}
		parts, offs := clustertest.Column(t, at, "_kafka", "partition"), clustertest.Column(t, at, "_kafka", "offset")
		for ch := range parts {
			for i := 0; i < parts[ch].Len(); i++ {
				k := pk{parts[ch].(*array.Int32).Value(i), offs[ch].(*array.Int64).Value(i)}
				var r row
				if strings.HasSuffix(name, "~dlq") {
					var v struct {
						ID   int64   `json:"id"`
						Note *string `json:"note"`
					}
					require.NoError(t, json.Unmarshal(clustertest.Column(t, at, "value")[ch].(*array.Binary).Value(i), &v))
					r = row{v.ID, v.Note}
				} else {
					r.id = clustertest.Column(t, at, "id")[ch].(*array.Int64).Value(i)
					if idx := at.Schema().FieldIndices("note"); len(idx) == 1 {
						if s := clustertest.Column(t, at, "note")[ch].(*array.String); s.IsValid(i) {
							n := s.Value(i)
							r.note = &n
						}
					}
				}
				_, dup := out[k]
				require.False(t, dup, "%s: offset %v twice", name, k)
				out[k] = r
			}
		}
		return out
	}
	// check: every produced record is in exactly one of the two tables,
	// the ones with a note in wantDLQ's place.
	check := func(wantInDLQ bool) {
		t.Helper()
		rows, dead := read("shop.notes"), read("shop.notes~dlq")
		require.Len(t, rows, len(notes)-len(dead))
		seen := map[int64]bool{}
		for k, r := range rows {
			_, both := dead[k]
			require.False(t, both, "offset %v in both tables", k)
			require.False(t, seen[r.id], "id %d twice", r.id)
			seen[r.id] = true
			if n := notes[r.id]; n != "" {
				require.False(t, wantInDLQ, "id %d has a note and is a row", r.id)
				require.NotNil(t, r.note, "id %d", r.id)
				require.Equal(t, n, *r.note)
			} else {
				require.Nil(t, r.note, "id %d", r.id)
			}
			require.Equal(t, int32(r.id%2), k.partition)
		}
		for k, r := range dead {
			require.False(t, seen[r.id], "id %d twice", r.id)
			seen[r.id] = true
			require.True(t, wantInDLQ)
			require.NotNil(t, r.note)
			require.Equal(t, notes[r.id], *r.note)
			require.Equal(t, int32(r.id%2), k.partition)
		}
		require.Len(t, seen, len(notes), "every record once")
	}
	check(true)
	require.Len(t, read("shop.notes~dlq"), 30)

	// An alter Iceberg does not allow.
	_, err = c.AlterTable(ctx, "shop.notes", json.RawMessage(`{"type":"struct","fields":[{"id":1,"name":"id","type":"string","required":false}]}`))
	var se *admin.StatusError
	require.True(t, errors.As(err, &se), "%v", err)
	require.Equal(t, 400, se.Code)
	require.Equal(t, "invalid table definition: field id: table has long, schema has string; "+schemas.ReasonPromotion, se.Message)

	// Add note; repair in batches until no range is pending (a range whose
	// table side a load's tail file still covers waits for the writer).
	alter := []byte(`{"type":"struct","fields":[
		{"id":1,"name":"id","type":"long","required":true},
		{"id":2,"name":"name","type":"string","required":false},
		{"id":3,"name":"note","type":"string","required":false}]}`)
	res, err := c.AlterTable(ctx, "shop.notes", alter)
	require.NoError(t, err)
	require.True(t, res.Changed)
	require.Equal(t, 1, res.SchemaID)
	var moved int64
	deadline := time.Now().Add(time.Minute)
	for {
		var after *writer.Position
		pending := 0
		for {
			r, err := c.RepairTable(ctx, "shop.notes", writer.RepairOptions{Limit: 2, After: after})
			require.NoError(t, err)
			require.Equal(t, 1, r.SchemaID)
			require.Zero(t, r.Unrepairable)
			require.Zero(t, r.DeadLetters)
			moved += r.Records
			pending += r.Pending
			if r.Next == nil {
				break
			}
			after = r.Next
		}
		if pending == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "ranges still pending")
		time.Sleep(200 * time.Millisecond)
	}
	require.EqualValues(t, 30, moved)
	check(false)
	require.Empty(t, read("shop.notes~dlq"))

	// The table lists both schema versions; its current one has note.
	cat, err := rest.NewCatalog(ctx, "mink", url)
	require.NoError(t, err)
	tbl, err := cat.LoadTable(ctx, table.Identifier{"shop", "notes"})
	require.NoError(t, err)
	require.Len(t, tbl.Metadata().Schemas(), 2)
	require.Equal(t, 1, tbl.Schema().ID)
	_, ok := tbl.Schema().FindFieldByName("note")
	require.True(t, ok)

	// Again, through the command line: nothing to do, nothing committed.
	before, err := c.Tables(ctx)
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, cli.Main([]string{"table", "repair", "shop.notes", "--admin", url}, &stdout, &stderr), stderr.String())
	require.Equal(t, "nothing to repair: no dead letters of shop.notes were built with a schema version older than 1, and no rows read null for a column it gives a default\n", stdout.String())
	after, err := c.Tables(ctx)
	require.NoError(t, err)
	require.Equal(t, snapshotsOf(before), snapshotsOf(after))

	// New records with a note are rows at once.
	produce(90, 99)
	check(false)
	require.Empty(t, read("shop.notes~dlq"))
}

// snapshotsOf maps tables to their current snapshot ids.
func snapshotsOf(ts []*tables.Table) map[string]int64 {
	out := map[string]int64{}
	for _, t := range ts {
		if t.CurrentSnapshotID != nil {
			out[t.FullName()] = *t.CurrentSnapshotID
		}
	}
	return out
}
