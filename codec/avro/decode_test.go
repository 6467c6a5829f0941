package avro_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/minkhq/mink/codec/avro"
)

// zz appends Avro's zig-zag varint of each v (the same encoding as Go's
// binary.AppendVarint).
func zz(b []byte, vs ...int64) []byte {
	for _, v := range vs {
		b = binary.AppendVarint(b, v)
	}
	return b
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// TestDecodeErrors: each corrupt payload fails with an error naming the
// field and the reason.
func TestDecodeErrors(t *testing.T) {
	sl := `{"type":"record","name":"R","fields":[{"name":"s","type":"string"},{"name":"l","type":"long"}]}`
	good := cat(zz(nil, 2), []byte("ab"), zz(nil, 5))
	arr := record(`{"type":"array","items":"long"}`)
	mp := record(`{"type":"map","values":"long"}`)
	empty := record(`{"type":"array","items":{"type":"record","name":"E","fields":[]}}`)
	tests := []struct {
		name    string
		schema  string
		payload []byte
		want    string
	}{
		{"empty", sl, nil, "field s: truncated payload at byte 0 of 0"},
		{"truncated string", sl, good[:2], "field s: truncated payload at byte 1 of 2"},
		{"truncated long", sl, cat(good[:3], []byte{0x80}), "field l: truncated payload at byte 4 of 4"},
		{"trailing bytes", sl, cat(good, []byte{0}), "1 bytes after the value (payload of 5 bytes)"},
		{"bad utf-8", sl, cat(zz(nil, 2), []byte{0xc3, 0x28}, zz(nil, 5)), "field s: string is not valid UTF-8"},
		{"negative length", sl, cat(zz(nil, -1), zz(nil, 5)), "field s: negative length -1"},
		{"varint overflow", sl, cat(zz(nil, 0), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}), "field l: varint at byte 1 overflows a long"},
		{"varint too long", sl, cat(zz(nil, 0), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x00}), "field l: varint at byte 1 overflows a long"},
		{"int out of range", record(`"int"`), zz(nil, math.MaxInt32+1), "field f: int 2147483648 out of range"},
		{"boolean byte", record(`"boolean"`), []byte{2}, "field f: boolean byte 0x02, not 0 or 1"},
		{"truncated double", record(`"double"`), []byte{1, 2, 3}, "field f: truncated payload at byte 0 of 3"},
		{"truncated fixed", record(`{"type":"fixed","name":"F","size":4}`), []byte{1}, "field f: truncated payload at byte 0 of 1"},
		{"enum index", record(`{"type":"enum","name":"E","symbols":["A","B"]}`), zz(nil, 2), "field f: enum index 2 out of range [0, 2)"},
		{"union index", record(`["null","int"]`), zz(nil, 2), "field f: union index 2 out of range [0, 2)"},
		{"negative union index", record(`["null","int"]`), zz(nil, -1), "field f: union index -1 out of range [0, 2)"},
		{"decimal too wide", record(`{"type":"bytes","logicalType":"decimal","precision":3,"scale":0}`), cat(zz(nil, 2), []byte{0x03, 0xe8}),
			"field f: unscaled decimal 1000 has more than 3 digits"},
		{"decimal of no bytes", record(`{"type":"bytes","logicalType":"decimal","precision":3,"scale":0}`), zz(nil, 0), "field f: decimal of no bytes"},
		{"decimal over 128 bits", record(`{"type":"bytes","logicalType":"decimal","precision":38,"scale":0}`), cat(zz(nil, 17), []byte{1}, make([]byte, 16)),
			"field f: decimal of 17 bytes exceeds precision 38"},
		{"decimal -2^127", record(`{"type":"bytes","logicalType":"decimal","precision":38,"scale":0}`), cat(zz(nil, 16), []byte{0x80}, make([]byte, 15)),
			"field f: unscaled decimal -170141183460469231731687303715884105728 has more than 38 digits"},
		{"decimal 10^38", record(`{"type":"bytes","logicalType":"decimal","precision":38,"scale":0}`),
			cat(zz(nil, 17), []byte{0x00, 0x4b, 0x3b, 0x4c, 0xa8, 0x5a, 0x86, 0xc4, 0x7a, 0x09, 0x8a, 0x22, 0x40, 0x00, 0x00, 0x00, 0x00}),
			"field f: unscaled decimal 100000000000000000000000000000000000000 has more than 38 digits"},
		{"decimal fixed too wide", record(`{"type":"fixed","name":"D","size":2,"logicalType":"decimal","precision":2,"scale":0}`), []byte{0, 100},
			"field f: unscaled decimal 100 has more than 2 digits"},
		{"uuid", record(`{"type":"string","logicalType":"uuid"}`), cat(zz(nil, 3), []byte("abc")), `field f: "abc" is not a UUID (8-4-4-4-12 hex digits)`},
		{"uuid bad digit", record(`{"type":"string","logicalType":"uuid"}`), cat(zz(nil, 36), []byte("0189dbf1-3c2d-7c8e-8a4b-2f1e0d9c8b7g")),
			`field f: "0189dbf1-3c2d-7c8e-8a4b-2f1e0d9c8b7g" is not a UUID (8-4-4-4-12 hex digits)`},
		{"time-millis negative", record(`{"type":"int","logicalType":"time-millis"}`), zz(nil, -1), "field f: time-millis -1 outside a day [0, 86400000)"},
		{"time-micros a day", record(`{"type":"long","logicalType":"time-micros"}`), zz(nil, 86_400_000_000), "field f: time-micros 86400000000 outside a day [0, 86400000000)"},
		{"timestamp-millis overflow", record(`{"type":"long","logicalType":"timestamp-millis"}`), zz(nil, math.MaxInt64/1000+1),
			"field f: timestamp of 9223372036854776 ms overflows Iceberg's int64 microseconds"},
		{"timestamp-nanos not whole µs", record(`{"type":"long","logicalType":"timestamp-nanos"}`), zz(nil, 1_700_000_000_000_000_001),
			"field f: timestamp of 1700000000000000001 ns is not a whole number of microseconds (the column holds µs)"},
		{"array truncated", arr, cat(zz(nil, 1), []byte{0x80}), "field f.element: truncated payload at byte 2 of 2"},
		{"array no end", arr, zz(nil, 1, 1), "field f: truncated payload at byte 2 of 2"},
		{"array count past input", arr, zz(nil, 1000, 1), "field f: block of 1000 items longer than the 1 bytes left"},
		{"array min count", arr, zz(nil, math.MinInt64), "field f: block count -9223372036854775808 out of range"},
		{"array negative size", arr, zz(nil, -1, -1, 1, 0), "field f: block size -1 bytes does not fit the 2 bytes left"},
		{"array size past input", arr, zz(nil, -1, 9, 1, 0), "field f: block size 9 bytes does not fit the 2 bytes left"},
		{"array size mismatch", arr, zz(nil, -2, 3, 1, 2, 0), "field f: block size 3 bytes, its items take 2"},
		{"map key utf-8", mp, cat(zz(nil, 1, 1), []byte{0xff}, zz(nil, 1, 0)), "field f: map key is not valid UTF-8"},
		{"zero-size items", empty, zz(nil, 1<<17), "field f: more than 65536 items of no size"},
		{"zero-size items in blocks", empty, zz(nil, 1<<16, 1, 0), "field f: more than 65536 items of no size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := avroSchema(tt.schema)
			typ, err := avro.Convert(s)
			if err != nil {
				t.Fatal(err)
			}
			dec, err := avro.NewDecoder(s, typ)
			if err != nil {
				t.Fatal(err)
			}
			err = dec.Decode(tt.payload)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got %v, want %s", err, tt.want)
			}
		})
	}
}

// TestDecodeBlocks: negative block counts (with byte sizes) and several
// blocks read as one array or map.
func TestDecodeBlocks(t *testing.T) {
	arr := record(`{"type":"array","items":"long"}`)
	got := rows(t, avroSchema(arr), nil,
		zz(nil, -2, 2, 1, 2, 1, 3, 0), // a sized block of 2 (1, 2), a block of 1 (3)
		zz(nil, 0),
	)
	if want := []string{`{"f":[1,2,3]}`, `{"f":[]}`}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %q, want %q", got, want)
	}
	mp := record(`{"type":"map","values":"long"}`)
	got = rows(t, avroSchema(mp), nil, cat(zz(nil, -1, 3, 1), []byte("a"), zz(nil, 7, 1, 1), []byte("b"), zz(nil, 8, 0)))
	if want := `{"f":[{"key":"a","value":7},{"key":"b","value":8}]}`; len(got) != 1 || got[0] != want {
		t.Fatalf("got %q, want %s", got, want)
	}
}

// TestNoHalfAppend: a failed Decode leaves nothing for Append, and the
// next good value appends alone.
func TestNoHalfAppend(t *testing.T) {
	schema := record(`{"type":"array","items":"string"}`)
	s := avroSchema(schema)
	typ, _ := avro.Convert(s)
	dec, err := avro.NewDecoder(s, typ)
	if err != nil {
		t.Fatal(err)
	}
	asc, _ := table.SchemaToArrowSchema(columns(typ), nil, true, false)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer rb.Release()
	bad := cat(zz(nil, 2, 1), []byte("a"), zz(nil, 1), []byte{0xff}, zz(nil, 0))
	if err := dec.Decode(bad); err == nil {
		t.Fatal("bad UTF-8 in the second element decoded")
	}
	if err := dec.Decode(encode(t, schema, map[string]any{"f": []any{"x"}})); err != nil {
		t.Fatal(err)
	}
	dec.Append(rb.Fields())
	rec := rb.NewRecordBatch()
	defer rec.Release()
	if rec.NumRows() != 1 || rec.Column(0).(*array.List).ListValues().Len() != 1 {
		t.Fatalf("got %d rows, %d elements", rec.NumRows(), rec.Column(0).(*array.List).ListValues().Len())
	}
}

// TestNoAllocs: steady-state Decode and Append of a record with strings,
// a list and a map allocate nothing (builders grown beforehand).
func TestNoAllocs(t *testing.T) {
	schema := record(`{"type":"record","name":"In","fields":[{"name":"s","type":"string"},{"name":"o","type":["null","double"]},
	 {"name":"a","type":{"type":"array","items":"long"}},{"name":"m","type":{"type":"map","values":"string"}}]}`)
	s := avroSchema(schema)
	typ, _ := avro.Convert(s)
	dec, err := avro.NewDecoder(s, typ)
	if err != nil {
		t.Fatal(err)
	}
	p := encode(t, schema, map[string]any{"f": map[string]any{"s": "abc", "o": 1.5, "a": []any{int64(1), int64(2)}, "m": map[string]any{"k": "v"}}})
	if err := dec.Decode(p); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := dec.Decode(p); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("Decode allocates %v times per value", n)
	}
}

// TestDecimalEdges: the widest decimals that fit, and bytes longer than
// 128 bits whose extra bytes are sign extension.
func TestDecimalEdges(t *testing.T) {
	max38 := []byte{0x00, 0x4b, 0x3b, 0x4c, 0xa8, 0x5a, 0x86, 0xc4, 0x7a, 0x09, 0x8a, 0x22, 0x3f, 0xff, 0xff, 0xff, 0xff} // 10^38 - 1
	neg := cat([]byte{0xff, 0xff}, bytes.Repeat([]byte{0xff}, 15), []byte{0xfe})                                          // -2 in 18 bytes
	dec := record(`{"type":"bytes","logicalType":"decimal","precision":38,"scale":2}`)
	got := rows(t, avroSchema(dec), nil, cat(zz(nil, 17), max38), cat(zz(nil, int64(len(neg))), neg))
	want := []string{`{"f":"999999999999999999999999999999999999.99"}`, `{"f":"-0.02"}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %q, want %q", got, want)
	}
	fixed := record(`{"type":"fixed","name":"D","size":17,"logicalType":"decimal","precision":38,"scale":0}`)
	got = rows(t, avroSchema(fixed), nil, max38)
	if want := `{"f":"99999999999999999999999999999999999999"}`; len(got) != 1 || got[0] != want {
		t.Fatalf("got %q, want %s", got, want)
	}
}
