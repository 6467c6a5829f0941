package protobuf_test

import (
	"encoding/json"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/minkhq/mink/codec/protobuf"
)

const shapesProto = `syntax = "proto2"; package f;
import "google/protobuf/struct.proto"; import "google/protobuf/empty.proto"; import "google/protobuf/timestamp.proto";
message S {
  optional google.protobuf.Struct st = 1;
  repeated google.protobuf.Value vs = 2;
  optional S next = 3;
  map<string, S> kids = 4;
  optional google.protobuf.Empty e = 5;
  optional group G = 6 { optional S back = 7; optional string s = 8; }
  oneof o { Mark m = 9; google.protobuf.ListValue l = 10; }
  optional google.protobuf.Timestamp at = 11;
  optional string name = 12;
}
message Mark {}`

// FuzzShapes: Decode of markers, JSON texts (Struct, Value, ListValue,
// recursion) and groups never panics, accepts only what protobuf-go
// accepts, and gives valid JSON texts, the same on a second decode.
func FuzzShapes(f *testing.F) {
	s := schema(shapesProto)
	md := descriptor(f, s)
	f.Add([]byte{})
	f.Add(payload(f, md, `{"st": {"a": [1, {"b": null}]}, "vs": ["x", 2], "next": {"name": "n", "next": {"e": {}}}, "kids": {"k": {"m": {}}},
		"G": {"back": {"name": "b"}, "s": "s"}, "l": [true], "at": "2024-01-01T00:00:00Z"}`))
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
	decode := func(t *testing.T, b []byte) (string, bool) {
		if dec.Decode(b) != nil {
			return "", false
		}
		rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
		defer rb.Release()
		dec.Append(rb.Fields())
		rec := rb.NewRecordBatch()
		defer rec.Release()
		return recordJSON(t, rec)[0], true
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		row, ok := decode(t, b)
		if !ok {
			return
		}
		if err := proto.Unmarshal(b, dynamicpb.NewMessage(md)); err != nil {
			t.Fatalf("Decode accepted what protobuf-go refuses: %v", err)
		}
		var cols map[string]any
		if err := json.Unmarshal([]byte(row), &cols); err != nil {
			t.Fatal(err)
		}
		texts := []any{cols["st"], cols["next"], cols["l"]}
		if vs, ok := cols["vs"].([]any); ok {
			texts = append(texts, vs...)
		}
		for _, x := range texts {
			if x, ok := x.(string); ok && !json.Valid([]byte(x)) {
				t.Fatalf("not JSON: %q", x)
			}
		}
		if again, _ := decode(t, b); again != row {
			t.Fatalf("decoded twice: %s, then %s", row, again)
		}
	})
}
