package protobuf_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/minkhq/mink/codec/protobuf"
)

// FuzzDecode: Decode never panics, and Append after a successful Decode
// builds a valid record (allProto covers every mapping row).
func FuzzDecode(f *testing.F) {
	s := schema(allProto)
	md := descriptor(f, s)
	f.Add([]byte{})
	f.Add(payload(f, md, `{"i32": -1, "s": "x", "inner": {"id": "y"}, "nums": [1, 2], "counts": {"a": "1"}, "by_id": {"3": {"id": "z"}}, "ts": "2024-01-02T03:04:05Z", "w_uint64": "5", "times": ["2000-01-01T00:00:00Z"]}`))
	f.Add(payload(f, md, `{"color": 9, "number": "3", "dur": "1s", "w_string": "s"}`))
	f.Add(protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1<<40))
	f.Add([]byte{0x12, 0x05, 'a'})
	f.Add([]byte{0x0b, 0x0c}) // a group start and end of an unknown field
	target, err := protobuf.Convert(s, nil)
	if err != nil {
		f.Fatal(err)
	}
	dec, err := protobuf.NewDecoder(s, nil, target)
	if err != nil {
		f.Fatal(err)
	}
	asc, err := table.SchemaToArrowSchema(iceberg.NewSchema(0, target.(*iceberg.StructType).FieldList...), nil, true, false)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if dec.Decode(b) != nil {
			return
		}
		// Decode is stricter than protobuf-go (wire types, UTF-8, ranges),
		// never more lenient.
		theirs := dynamicpb.NewMessage(md)
		if err := proto.Unmarshal(b, theirs); err != nil {
			t.Fatalf("Decode accepted what protobuf-go refuses: %v", err)
		}
		rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
		defer rb.Release()
		dec.Append(rb.Fields())
		rec := rb.NewRecordBatch()
		defer rec.Release()
		if rec.NumRows() != 1 {
			t.Fatalf("%d rows", rec.NumRows())
		}
		for i, c := range rec.Columns() {
			if c.Len() != 1 {
				t.Fatalf("column %d: %d values", i, c.Len())
			}
		}
		row := recordJSON(t, rec)[0] // reads every value back
		// Every value is protobuf-go's: last one wins, merges, packed
		// lists, map keys, oneofs, enums, well-known types.
		if diff, ok := sameAsProtobufGo(row, theirs); ok && diff != "" {
			t.Fatalf("%s\nrow: %s", diff, row)
		}
	})
}
