package schemas_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

// FuzzInferBuild builds ranges of a json table whose schema is inferred
// (docs/design.md §4.7), over a real PostgreSQL, from records of any
// content, and checks that a build never fails (a failing range fails at
// every retry: the table's indexing would stop there) and that every
// record is a row or a dead letter. Each input gets a table of its own,
// with exact or case-insensitive matching and unknown fields ignored or
// dead-lettered, and builds twice: the second range meets the schema the
// first one evolved.
func FuzzInferBuild(f *testing.F) {
	f.Add(uint8(0), []byte(`{"id":1,"page":{"path":"/a","ms":12.5},"tags":["x"]}`), []byte(`{"id":2,"page":{"ms":1},"n":null}`))
	f.Add(uint8(1), []byte(`{"ID":1,"b":1,"B":2}`), []byte(`{"Id":2,"c":{"D":1,"d":2}}`))
	f.Add(uint8(1), []byte(`{"id":1,"S":{"x":1}}`), []byte(`{"s":{"X":2,"y":[{"Z":1}]}}`))
	f.Add(uint8(2), []byte(`{"id":1,"a\u0000":1}`), []byte(`{"\u0000":{"x":1}}`))
	f.Add(uint8(0), []byte(`{"id":"x","o":{}}`), []byte(`{"id":9007199254740993,"o":{"p":1}}`))
	f.Add(uint8(3), []byte(`{"id":1,"l":[1,"x"]}`), []byte(`[1]`))
	ctx := context.Background()
	pool, _ := pgtest.Pool(f)
	store := schemas.NewStore(pool, nil)
	declared := json.RawMessage(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":false}]}`)
	n := 0
	f.Fuzz(func(t *testing.T, opts uint8, a, b []byte) {
		n++
		props := map[string]string{}
		if opts&1 != 0 {
			props[codec.PropFieldMatching] = string(codec.MatchCaseInsensitive)
		}
		if opts&2 != 0 {
			props[codec.PropUnknownFields] = string(codec.UnknownDeadLetter)
		}
		tbl, err := tables.Create(ctx, pool, testkit.Warehouse, tables.Definition{Namespace: "f", Name: fmt.Sprintf("t%d", n), Topic: "t",
			ValueFormat: "json", Infer: true, Schema: declared, Properties: props}, []tables.PartitionStart{{Partition: 0}})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tables.Delete(ctx, pool, tbl.Namespace, tbl.Name) }()
		for i, v := range [][]byte{a, b} {
			if tbl, err = tables.Get(ctx, pool, tbl.ID); err != nil {
				t.Fatal(err)
			}
			res, _, err := rangefile.Encode(ctx, store, tbl, []*kgo.Record{{Partition: 0, Offset: int64(i), Value: v}}, -1)
			if err != nil {
				t.Fatalf("range %d (%q) of a table with %v: %v", i, v, props, err)
			}
			rows := int64(0)
			for _, file := range []*datafile.File{res.Data, res.DLQ} {
				if file != nil {
					rows += file.Stats.RecordCount
				}
			}
			if rows != 1 {
				t.Fatalf("range %d (%q): %d rows and dead letters for 1 record", i, v, rows)
			}
		}
	})
}
