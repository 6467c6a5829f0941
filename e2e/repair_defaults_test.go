package e2e

import (
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/internal/clustertest"
)

// TestRepairDefaults (docs/formats.md, Avro "Defaults and aliases";
// design.md §4.7 "Alter and repair"): a table made from v1 commits v1
// records; then v2 adds priority (default 3) and a bytes decimal rate
// (default 5.00). The v1 rows, in files encoded before version 1, read
// null through iceberg-go; `mink table status` counts the range and
// names the repair; after `mink table repair` every v1 row reads
// priority 3 and rate 5.00, the row count is unchanged and ~dlq stays
// empty.
func TestRepairDefaults(t *testing.T) {
	env := startEnv(t, 1)
	url := env.Nodes[0].URL()
	reg := registryClient(t, env)
	const v1 = `{"type":"record","name":"Order","namespace":"e2e","fields":[{"name":"id","type":"long"}]}`
	const v2 = `{"type":"record","name":"Order","namespace":"e2e","fields":[{"name":"id","type":"long"},
 {"name":"priority","type":"int","default":3},
 {"name":"rate","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2},"default":"\u0001\u00f4"}]}`
	id1 := register(t, reg, "rdef-value", sr.TypeAvro, v1)
	createTable(t, env, 1, map[string]any{"namespace": "test", "name": "rdef", "topic": "rdef", "value_format": "avro"})
	enc := func(text string, id int, v map[string]any) []byte {
		s, err := avro.Parse(text)
		require.NoError(t, err)
		b, err := avro.Marshal(s, v)
		require.NoError(t, err)
		return append(wire.AppendHeader(nil, id, nil), b...)
	}
	produceValues(t, env, "rdef", map[int32][][]byte{0: {
		enc(v1, id1, map[string]any{"id": int64(1)}),
		enc(v1, id1, map[string]any{"id": int64(2)}),
	}})
	clustertest.WaitCommitted(t, url, "test.rdef", map[int32]int64{0: 2}, clustertest.CommitTimeout)

	id2 := register(t, reg, "rdef-value", sr.TypeAvro, v2)
	produceValues(t, env, "rdef", map[int32][][]byte{0: {
		enc(v2, id2, map[string]any{"id": int64(3), "priority": int32(1), "rate": big.NewRat(-1234, 100)}),
	}})
	clustertest.WaitCaughtUp(t, url, "test.rdef")

	read := func() map[int64]map[string]any {
		got := map[int64]map[string]any{}
		eachRow(t, clustertest.ScanAll(t, url, "test.rdef"), func(row map[string]any) {
			delete(row, "_kafka")
			got[row["id"].(int64)] = row
		})
		return got
	}
	require.Equal(t, map[int64]map[string]any{
		1: {"id": int64(1), "priority": nil, "rate": nil},
		2: {"id": int64(2), "priority": nil, "rate": nil},
		3: {"id": int64(3), "priority": int64(1), "rate": "-12.34"},
	}, read(), "today's reading of files encoded before version 1")
	require.Zero(t, clustertest.ScanAll(t, url, "test.rdef~dlq").NumRows())

	// Once the v1 range is a committed data file, the status counts it.
	hint := "defaults: 1 range reads null for columns version 1 gives a default (encoded before them): run mink table repair test.rdef\n"
	deadline := time.Now().Add(clustertest.CommitTimeout)
	for !strings.Contains(mink(t, url, "table", "status", "test.rdef"), hint) {
		require.True(t, time.Now().Before(deadline), "status never counted the range")
		time.Sleep(200 * time.Millisecond)
	}

	// Repair until no range is pending (a tail file over the range waits
	// for the writer).
	var out strings.Builder
	for {
		o := mink(t, url, "table", "repair", "test.rdef")
		out.WriteString(o)
		if !strings.Contains(o, "pending") {
			break
		}
		require.True(t, time.Now().Before(deadline), "ranges still pending: %s", out.String())
		time.Sleep(200 * time.Millisecond)
	}
	require.Contains(t, out.String(), "repaired 1 of 1 ranges with schema version 1: 0 records moved from test.rdef~dlq to test.rdef\n"+
		"defaults: 1 of these ranges were encoded with a version lacking a column that version 1 gives a default: their 2 rows now read the defaults, not null\n")
	require.Equal(t, map[int64]map[string]any{
		1: {"id": int64(1), "priority": int64(3), "rate": "5.00"},
		2: {"id": int64(2), "priority": int64(3), "rate": "5.00"},
		3: {"id": int64(3), "priority": int64(1), "rate": "-12.34"},
	}, read())
	require.Zero(t, clustertest.ScanAll(t, url, "test.rdef~dlq").NumRows())
	require.NotContains(t, mink(t, url, "table", "status", "test.rdef"), "defaults:")
	require.Equal(t, "nothing to repair: no dead letters of test.rdef were built with a schema version older than 1, and no rows read null for a column it gives a default\n",
		mink(t, url, "table", "repair", "test.rdef"))
}
