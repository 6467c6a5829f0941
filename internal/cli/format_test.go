package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// Every value `mink scan` prints is exact and reads back as itself:
// decimals keep every digit and their scale, floats print their shortest
// round-trip text (NaN and the infinities as strings in JSON), binary is
// base64, uuids their 8-4-4-4-12 text, and nested values keep the same
// rules inside (format.go).
func TestScanValues(t *testing.T) {
	mem := memory.NewGoAllocator()
	dec := func(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }
	big, ok := decimal128.FromString("-1234567890123456789012345678.9012345678", 38, 10)
	require.NoError(t, ok)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "tiny", Type: dec(38, 8), Nullable: true},
		{Name: "scaled", Type: dec(10, 3), Nullable: true},
		{Name: "big", Type: dec(38, 10), Nullable: true},
		{Name: "d", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "fx", Type: &arrow.FixedSizeBinaryType{ByteWidth: 3}, Nullable: true},
		{Name: "u", Type: extensions.NewUUIDType(), Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
		{Name: "ld", Type: arrow.ListOf(dec(9, 2)), Nullable: true},
		{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, dec(5, 1)), Nullable: true},
		{Name: "st", Type: arrow.StructOf(
			arrow.Field{Name: "x", Type: dec(4, 4), Nullable: true},
			arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Float64, Nullable: true}), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Decimal128Builder).Append(decimal128.FromI64(1))
	b.Field(1).(*array.Decimal128Builder).Append(decimal128.FromI64(-12340))
	b.Field(2).(*array.Decimal128Builder).Append(big)
	b.Field(3).(*array.Float64Builder).Append(0.00000001)
	b.Field(4).(*array.Float32Builder).Append(0.1)
	b.Field(5).(*array.Int64Builder).Append(math.MaxInt64)
	b.Field(6).(*array.StringBuilder).Append(`a "quoted" <tag> & é`)
	b.Field(7).(*array.BinaryBuilder).Append([]byte{0, 1, 0xfe, 0xff})
	b.Field(8).(*array.FixedSizeBinaryBuilder).Append([]byte("abc"))
	b.Field(9).(*extensions.UUIDBuilder).Append(uuid.MustParse("f79c3e09-677c-4bbd-a479-3f349cb785e7"))
	lb := b.Field(10).(*array.ListBuilder)
	lb.Append(true)
	lv := lb.ValueBuilder().(*array.Float64Builder)
	lv.Append(math.NaN())
	lv.Append(math.Inf(1))
	lv.Append(math.Inf(-1))
	lv.Append(1e21)
	lv.AppendNull()
	ldb := b.Field(11).(*array.ListBuilder)
	ldb.Append(true)
	ldb.ValueBuilder().(*array.Decimal128Builder).Append(decimal128.FromI64(5))
	ldb.ValueBuilder().(*array.Decimal128Builder).Append(decimal128.FromI64(-100))
	mb := b.Field(12).(*array.MapBuilder)
	mb.Append(true)
	mb.KeyBuilder().(*array.StringBuilder).Append("k")
	mb.ItemBuilder().(*array.Decimal128Builder).Append(decimal128.FromI64(10))
	sb := b.Field(13).(*array.StructBuilder)
	sb.Append(true)
	sb.FieldBuilder(0).(*array.Decimal128Builder).Append(decimal128.FromI64(1))
	sb.FieldBuilder(1).(*array.Float64Builder).Append(math.NaN())
	for i := 0; i < len(schema.Fields()); i++ { // a row of nulls
		b.Field(i).AppendNull()
	}
	rec := b.NewRecordBatch()
	defer rec.Release()

	var out bytes.Buffer
	p, err := newPrinter("json", &out, rec.Schema())
	require.NoError(t, err)
	require.NoError(t, p.row(rec, 0))
	require.NoError(t, p.row(rec, 1))
	require.NoError(t, p.close(2))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Equal(t, `{"tiny":"0.00000001","scaled":"-12.340","big":"-1234567890123456789012345678.9012345678",`+
		`"d":1e-8,"f":0.1,"n":9223372036854775807,"s":"a \"quoted\" <tag> & é","b":"AAH+/w==","fx":"YWJj",`+
		`"u":"f79c3e09-677c-4bbd-a479-3f349cb785e7","l":["NaN","Infinity","-Infinity",1e+21,null],`+
		`"ld":["0.05","-1.00"],"m":[{"key":"k","value":"1.0"}],"st":{"x":"0.0001","y":"NaN"}}`, lines[0])
	require.Equal(t, `{"tiny":null,"scaled":null,"big":null,"d":null,"f":null,"n":null,"s":null,"b":null,"fx":null,`+
		`"u":null,"l":null,"ld":null,"m":null,"st":null}`, lines[1])

	out.Reset()
	p, err = newPrinter("csv", &out, rec.Schema())
	require.NoError(t, err)
	require.NoError(t, p.row(rec, 0))
	require.NoError(t, p.close(1))
	require.Equal(t, "tiny,scaled,big,d,f,n,s,b,fx,u,l,ld,m,st.x,st.y\n"+
		`0.00000001,-12.340,-1234567890123456789012345678.9012345678,1e-8,0.1,9223372036854775807,`+
		`"a ""quoted"" <tag> & é",AAH+/w==,YWJj,f79c3e09-677c-4bbd-a479-3f349cb785e7,`+
		`"[""NaN"",""Infinity"",""-Infinity"",1e+21,null]","[""0.05"",""-1.00""]","[{""key"":""k"",""value"":""1.0""}]",0.0001,NaN`+"\n",
		out.String())

	out.Reset()
	p, err = newPrinter("table", &out, rec.Schema())
	require.NoError(t, err)
	require.NoError(t, p.row(rec, 0))
	require.NoError(t, p.close(1))
	fields := strings.Fields(strings.Split(out.String(), "\n")[1])
	require.Equal(t, []string{"0.00000001", "-12.340", "-1234567890123456789012345678.9012345678"}, fields[:3])
	require.Equal(t, []string{"0.0001", "NaN"}, fields[len(fields)-2:])
}

// A table cell goes to a terminal: its control and bidirectional
// characters print escaped (they were written raw, so a producer could
// send escape sequences to an operator's terminal or fake rows); JSON and
// CSV keep the value exact.
func TestTableEscapesControls(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	value := "red\x1b[31mX\x1b[0m\a\rZ\tq\n\u202eé\x00"
	b.Field(0).(*array.StringBuilder).Append(value)
	rec := b.NewRecordBatch()
	defer rec.Release()

	var out bytes.Buffer
	p, err := newPrinter("table", &out, rec.Schema())
	require.NoError(t, err)
	require.NoError(t, p.row(rec, 0))
	require.NoError(t, p.close(1))
	require.Equal(t, "v\n"+`red\x1b[31mX\x1b[0m\a\rZ\tq\n\u202eé\x00`+"\n(1 row)\n", out.String())

	out.Reset()
	p, err = newPrinter("json", &out, rec.Schema())
	require.NoError(t, err)
	require.NoError(t, p.row(rec, 0))
	var got map[string]string
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	require.Equal(t, value, got["v"])
}
