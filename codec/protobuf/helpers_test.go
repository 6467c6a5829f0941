package protobuf_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/bufbuild/protocompile"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/minkhq/mink/codec/protobuf"
	"github.com/minkhq/mink/codec/wire"
)

func schema(text string, refs ...wire.Reference) *wire.Schema {
	return &wire.Schema{ID: 1, Type: wire.TypeProtobuf, Text: text, References: refs}
}

// descriptor compiles s on its own (as a producer would) and returns the
// message at indexes, to build payloads with.
func descriptor(t testing.TB, s *wire.Schema, indexes ...int) protoreflect.MessageDescriptor {
	t.Helper()
	files := map[string]string{"main.proto": s.Text}
	for _, r := range s.References {
		files[r.Name] = r.Schema.Text
	}
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(files),
	})}
	fs, err := c.Compile(context.Background(), "main.proto")
	require.NoError(t, err)
	if len(indexes) == 0 {
		indexes = []int{0}
	}
	msgs := fs[0].Messages()
	var md protoreflect.MessageDescriptor
	for _, i := range indexes {
		md = msgs.Get(i)
		msgs = md.Messages()
	}
	return md
}

// payload marshals the protojson text js as a message of md.
func payload(t testing.TB, md protoreflect.MessageDescriptor, js string) []byte {
	t.Helper()
	m := dynamicpb.NewMessage(md)
	require.NoError(t, protojson.Unmarshal([]byte(js), m), js)
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	require.NoError(t, err)
	return b
}

// rows decodes each payload into target (Convert's type when nil), builds
// the Arrow record through table.SchemaToArrowSchema and returns its rows
// as JSON lines (arrow's RecordToJSON), or the first Decode error.
func rows(t testing.TB, s *wire.Schema, indexes []int, target iceberg.Type, payloads ...[]byte) ([]string, error) {
	t.Helper()
	if target == nil {
		var err error
		target, err = protobuf.Convert(s, indexes)
		require.NoError(t, err)
	}
	dec, err := protobuf.NewDecoder(s, indexes, target)
	require.NoError(t, err)
	asc, err := table.SchemaToArrowSchema(iceberg.NewSchema(0, target.(*iceberg.StructType).FieldList...), nil, true, false)
	require.NoError(t, err)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer rb.Release()
	for _, p := range payloads {
		if err := dec.Decode(p); err != nil {
			return nil, err
		}
		dec.Append(rb.Fields())
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	require.NoError(t, array.RecordToJSON(rec, &buf))
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"), nil
}
