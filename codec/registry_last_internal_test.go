package codec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/minkhq/mink/codec/wire"
)

type oneWriter struct{ s *wire.Schema }

func (w oneWriter) WriterSchema(_ bool, id int, _ []int) (*wire.Schema, error) { return w.s, nil }

// TestRegistryDecoderSwitchesWriters: values that alternate between two
// messages of one Protobuf schema (message indexes [0] and [1]) are each
// decoded with their own message, however the runs fall: the writer kept
// from the previous value is used only when the header repeats it.
func TestRegistryDecoderSwitchesWriters(t *testing.T) {
	ws := &wire.Schema{ID: 7, Type: wire.TypeProtobuf, Text: `syntax = "proto3";
message A { int64 id = 1; }
message B { string s = 1; }
`}
	sc, err := TableSchema(Raw, Protobuf, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "s", Type: iceberg.PrimitiveTypes.String}))
	require.NoError(t, err)
	dec, err := NewDecoderConfig(sc, DecoderConfig{Format: Protobuf, KeyFormat: Raw, Writers: oneWriter{ws}})
	require.NoError(t, err)
	a := func(id uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(wire.AppendHeader(nil, 7, []int{0}), 1, protowire.VarintType), id)
	}
	b := func(s string) []byte {
		return protowire.AppendString(protowire.AppendTag(wire.AppendHeader(nil, 7, []int{1}), 1, protowire.BytesType), s)
	}
	idB := array.NewInt64Builder(memory.DefaultAllocator)
	sB := array.NewStringBuilder(memory.DefaultAllocator)
	cols := []array.Builder{idB, sB}
	for _, v := range [][]byte{a(5), b("x"), b("y"), a(6), a(7), b("z")} {
		require.NoError(t, dec.Decode(v))
		dec.Append(cols)
	}
	ids, ss := idB.NewInt64Array(), sB.NewStringArray()
	require.Equal(t, `[5 (null) (null) 6 7 (null)]`, ids.String())
	require.Equal(t, `[(null) "x" "y" (null) (null) "z"]`, ss.String())
}
