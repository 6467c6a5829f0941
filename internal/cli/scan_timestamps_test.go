package cli

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

// mink scan prints timestamps exactly at any year, in every format and at
// any depth: arrow alone prints the bare integer past year 9999.
func TestScanTimestamps(t *testing.T) {
	tz := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "_kafka", Type: arrow.StructOf(arrow.Field{Name: "timestamp", Type: tz})},
		{Name: "local", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
		{Name: "list", Type: arrow.ListOf(tz)},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	us := []int64{253402300799999000, 9223372036855000, math.MaxInt64, math.MinInt64, -1000}
	for _, v := range us {
		kb := b.Field(0).(*array.StructBuilder)
		kb.Append(true)
		kb.FieldBuilder(0).(*array.TimestampBuilder).Append(arrow.Timestamp(v))
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(v))
		lb := b.Field(2).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.TimestampBuilder).Append(arrow.Timestamp(v))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()

	var out bytes.Buffer
	p, err := newPrinter("csv", &out, sc)
	require.NoError(t, err)
	for r := range us {
		require.NoError(t, p.row(rec, r))
	}
	require.NoError(t, p.close(int64(len(us))))
	require.Equal(t, `_kafka.timestamp,local,list
9999-12-31T23:59:59.999Z,9999-12-31 23:59:59.999,"[""9999-12-31T23:59:59.999Z""]"
2262-04-11T23:47:16.855Z,2262-04-11 23:47:16.855,"[""2262-04-11T23:47:16.855Z""]"
+294247-01-10T04:00:54.775807Z,+294247-01-10 04:00:54.775807,"[""+294247-01-10T04:00:54.775807Z""]"
-290308-12-21T19:59:05.224192Z,-290308-12-21 19:59:05.224192,"[""-290308-12-21T19:59:05.224192Z""]"
1969-12-31T23:59:59.999Z,1969-12-31 23:59:59.999,"[""1969-12-31T23:59:59.999Z""]"
`, out.String())

	out.Reset()
	p, err = newPrinter("json", &out, sc)
	require.NoError(t, err)
	require.NoError(t, p.row(rec, 0))
	require.Equal(t, `{"_kafka":{"timestamp":"9999-12-31T23:59:59.999Z"},"local":"9999-12-31 23:59:59.999","list":["9999-12-31T23:59:59.999Z"]}`+"\n", out.String())
	out.Reset()
	require.NoError(t, p.row(rec, 2))
	require.Equal(t, `{"_kafka":{"timestamp":"+294247-01-10T04:00:54.775807Z"},"local":"+294247-01-10 04:00:54.775807","list":["+294247-01-10T04:00:54.775807Z"]}`+"\n", out.String())
}

// --columns gives the order of the columns printed (a struct's name stands
// for its fields); the others follow in schema order. Long cells are cut
// at a character, not inside one.
func TestScanColumnsOrder(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "_kafka", Type: arrow.StructOf(arrow.Field{Name: "offset", Type: arrow.PrimitiveTypes.Int64},
			arrow.Field{Name: "partition", Type: arrow.PrimitiveTypes.Int32})},
		{Name: "a", Type: arrow.BinaryTypes.String},
		{Name: "b", Type: arrow.BinaryTypes.String},
	}, nil)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer rb.Release()
	kb := rb.Field(0).(*array.StructBuilder)
	kb.Append(true)
	kb.FieldBuilder(0).(*array.Int64Builder).Append(7)
	kb.FieldBuilder(1).(*array.Int32Builder).Append(2)
	rb.Field(1).(*array.StringBuilder).Append("x")
	rb.Field(2).(*array.StringBuilder).Append(strings.Repeat("é", 45))
	rec := rb.NewRecordBatch()
	defer rec.Release()

	var out bytes.Buffer
	p, err := newPrinter("csv", &out, sc, "b", "_kafka.partition")
	require.NoError(t, err)
	require.NoError(t, p.row(rec, 0))
	require.NoError(t, p.close(1))
	require.Equal(t, "b,_kafka.partition,_kafka.offset,a\n"+strings.Repeat("é", 45)+",2,7,x\n", out.String())

	out.Reset()
	p, err = newPrinter("json", &out, sc, "b", "_kafka.partition")
	require.NoError(t, err)
	require.NoError(t, p.row(rec, 0))
	require.Equal(t, `{"b":"`+strings.Repeat("é", 45)+`","_kafka":{"offset":7,"partition":2},"a":"x"}`+"\n", out.String())

	out.Reset()
	p, err = newPrinter("table", &out, sc, "b")
	require.NoError(t, err)
	require.NoError(t, p.row(rec, 0))
	require.NoError(t, p.close(1))
	lines := strings.Split(out.String(), "\n")
	require.Equal(t, []string{"b", "_kafka.offset", "_kafka.partition", "a"}, strings.Fields(lines[0]))
	require.Equal(t, []string{strings.Repeat("é", 37) + "...", "7", "2", "x"}, strings.Fields(lines[1]))
	require.Equal(t, "(1 row)", lines[2])
}
