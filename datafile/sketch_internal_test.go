package datafile

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/datasketches-go/theta"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// estimate decodes a stored sketch and returns its estimate.
func estimate(t *testing.T, b []byte) float64 {
	t.Helper()
	sk, err := theta.Decode(b, SketchSeed)
	require.NoError(t, err)
	return sk.Estimate()
}

// sketchOf is the sketch of values fed as given (the reference path:
// one UpdateBytes per value, as Java's update(byte[])).
func sketchOf(t *testing.T, values ...[]byte) []byte {
	sk := NewSketch()
	for _, v := range values {
		if len(v) > 0 {
			_ = sk.UpdateBytes(v)
		}
	}
	var out bytes.Buffer
	enc := theta.NewEncoder(&out, true)
	require.NoError(t, enc.Encode(sk.CompactOrdered()))
	return out.Bytes()
}

// TestColumnSketchesAndNaN: every primitive type is fed as Iceberg's
// single-value serialization, nulls (also under a null struct) are left
// out, runs of one value count once, lists get no sketch, and float and
// double fields count their NaN values (also nested).
func TestColumnSketchesAndNaN(t *testing.T) {
	dec := iceberg.DecimalTypeOf(20, 2)
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "b", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: 2, Name: "i", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 3, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 4, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "f", Type: iceberg.PrimitiveTypes.Float32},
			{ID: 6, Name: "str", Type: iceberg.PrimitiveTypes.String},
		}}},
		iceberg.NestedField{ID: 7, Name: "dec", Type: dec},
		iceberg.NestedField{ID: 8, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
		iceberg.NestedField{ID: 9, Name: "l", Type: &iceberg.ListType{ElementID: 10, Element: iceberg.PrimitiveTypes.Float64}},
		iceberg.NestedField{ID: 11, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 12, Name: "n", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 13, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
	)
	require.Equal(t, []int{1, 2, 3, 5, 6, 7, 8, 11, 12, 13}, SketchedFields(sc))
	asc, err := arrowSchema(sc)
	require.NoError(t, err)
	rb := array.NewRecordBuilder(memory.NewGoAllocator(), asc)
	defer rb.Release()
	nan := math.NaN()
	u1, u2 := uuid.MustParse("00112233-4455-6677-8899-aabbccddeeff"), uuid.MustParse("f0e1d2c3-b4a5-9687-7869-5a4b3c2d1e0f")
	// Rows: 0..4.
	rb.Field(0).(*array.BooleanBuilder).AppendValues([]bool{true, true, false, false, true}, []bool{true, true, true, false, true})
	rb.Field(1).(*array.Int32Builder).AppendValues([]int32{7, 7, 7, -1, 0}, nil)
	rb.Field(2).(*array.Float64Builder).AppendValues([]float64{nan, -1.5, nan, 0, 2}, []bool{true, true, true, false, true})
	sb := rb.Field(3).(*array.StructBuilder)
	sb.AppendValues([]bool{true, true, false, true, true})
	// Row 2's struct is null: its children's values do not count.
	sb.FieldBuilder(0).(*array.Float32Builder).AppendValues([]float32{float32(nan), 1, float32(nan), 3, 1}, nil)
	sb.FieldBuilder(1).(*array.StringBuilder).AppendValues([]string{"a", "", "z", "b", "a"}, nil)
	db := rb.Field(4).(*array.Decimal128Builder)
	for _, v := range []int64{12345, -12345, 0, 128, -128} {
		db.Append(decimal128.FromI64(v))
	}
	rb.Field(5).(*extensions.UUIDBuilder).AppendValues([]uuid.UUID{u1, u2, u1, u1, u2}, nil)
	lb := rb.Field(6).(*array.ListBuilder)
	for range 5 {
		lb.Append(true)
		lb.ValueBuilder().(*array.Float64Builder).Append(nan)
	}
	rb.Field(7).(*array.Date32Builder).AppendValues([]arrow.Date32{19000, 19000, 19001, 19002, 19000}, nil)
	rb.Field(8).(*array.Int64Builder).AppendValues([]int64{-1, math.MinInt64, 5, 5, -1}, nil)
	rb.Field(9).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{-1000000, 0, 1700000000000000, 0, 0}, nil)
	rec := rb.NewRecordBatch()
	defer rec.Release()

	sk, nans, err := columnSketches(sc, rec)
	require.NoError(t, err)
	require.Equal(t, map[int]int64{3: 2, 5: 1}, nans, "NaN counts: non-null NaNs, not under a null struct; none for list elements")
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	le64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	f32 := func(v float32) []byte { return le32(math.Float32bits(v)) }
	f64 := func(v float64) []byte { return le64(math.Float64bits(v)) }
	javaBig := func(v int64) []byte { return bigEndianTwos(big.NewInt(v)) }
	want := map[int][]byte{
		1:  sketchOf(t, []byte{1}, []byte{0}),
		2:  sketchOf(t, le32(7), le32(math.MaxUint32), le32(0)),
		3:  sketchOf(t, f64(nan), f64(-1.5), f64(2)),
		5:  sketchOf(t, f32(float32(nan)), f32(1), f32(3)),
		6:  sketchOf(t, []byte("a"), []byte("b")),
		7:  sketchOf(t, javaBig(12345), javaBig(-12345), javaBig(0), javaBig(128), javaBig(-128)),
		8:  sketchOf(t, u1[:], u2[:]),
		11: sketchOf(t, le32(19000), le32(19001), le32(19002)),
		12: sketchOf(t, le64(math.MaxUint64), le64(1<<63), le64(5)),
		13: sketchOf(t, le64(uint64(1<<64-1000000)), le64(0), le64(1700000000000000)),
	}
	require.Equal(t, want, map[int][]byte(sk))
	for id, n := range map[int]float64{1: 2, 2: 3, 3: 3, 5: 3, 6: 2, 7: 5, 8: 2, 11: 3, 12: 3, 13: 3} {
		require.Equal(t, n, estimate(t, sk[id]), "field %d", id)
	}

	enc, err := sk.MarshalBinary()
	require.NoError(t, err)
	back, err := UnmarshalSketches(enc)
	require.NoError(t, err)
	require.Equal(t, sk, back)
	_, err = UnmarshalSketches(enc[:len(enc)-1])
	require.Error(t, err)
}

// bigEndianTwos is Java's BigInteger.toByteArray: the minimal big-endian
// two's complement.
func bigEndianTwos(v *big.Int) []byte {
	if v.Sign() >= 0 {
		b := v.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -v - 1, complemented.
	m := new(big.Int).Neg(v)
	m.Sub(m, big.NewInt(1))
	b := m.Bytes()
	if len(b) == 0 || b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	for i := range b {
		b[i] = ^b[i]
	}
	return b
}

// TestDecimalBytes checks decimalBytes against BigInteger.toByteArray's
// rule over the edges of each length.
func TestDecimalBytes(t *testing.T) {
	var buf [16]byte
	for _, v := range []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(-1), big.NewInt(127), big.NewInt(128), big.NewInt(-128),
		big.NewInt(-129), big.NewInt(255), big.NewInt(32767), big.NewInt(-32768), big.NewInt(math.MaxInt64), big.NewInt(math.MinInt64),
		new(big.Int).Lsh(big.NewInt(1), 100), new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 126))} {
		n := decimal128.FromBigInt(v)
		got := buf[:decimalBytes(buf[:], n.HighBits(), n.LowBits())]
		require.Equal(t, bigEndianTwos(v), got, "%s", v)
	}
}

// TestSketchAdmitSame: feeding through colSketch (its own hash, the theta
// screen and the seen hashes in front of the library) gives the bytes the
// library gives when fed every value, in exact and estimation mode, with
// repeats near and far, for bytes, 4-byte and 8-byte values.
func TestSketchAdmitSame(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	cases := map[string]struct {
		n, distinct int
	}{
		"exact, repeats":           {20000, 300},
		"exact, all distinct":      {3000, 3000},
		"estimation, repeats":      {200000, 50000},
		"estimation, all distinct": {200000, 200000},
	}
	for name, cs := range cases {
		t.Run(name, func(t *testing.T) {
			vals := make([]uint64, cs.n)
			for i := range vals {
				vals[i] = uint64(rnd.IntN(cs.distinct)) * 0x9e3779b97f4a7c15
			}
			compact := func(sk *theta.QuickSelectUpdateSketch) []byte {
				var out bytes.Buffer
				enc := theta.NewEncoder(&out, true)
				require.NoError(t, enc.Encode(sk.CompactOrdered()))
				return out.Bytes()
			}
			var c colSketch
			// Bytes of several lengths (the hash's blocks and tails).
			ref := NewSketch()
			c.reset()
			for _, v := range vals {
				b := binary.LittleEndian.AppendUint64(nil, v)
				b = append(b, bytes.Repeat(b, 3)[:v%19]...)
				_ = ref.UpdateBytes(b)
				c.feed(b)
			}
			require.Equal(t, compact(ref), compact(c.sk), "bytes")
			ref = NewSketch()
			c.reset()
			var buf [8]byte
			for _, v := range vals {
				binary.LittleEndian.PutUint64(buf[:], v)
				_ = ref.UpdateBytes(buf[:])
				c.feed64(v)
			}
			require.Equal(t, compact(ref), compact(c.sk), "8-byte values")
			ref = NewSketch()
			c.reset()
			for _, v := range vals {
				binary.LittleEndian.PutUint32(buf[:], uint32(v>>32))
				_ = ref.UpdateBytes(buf[:4])
				c.feed32(uint32(v >> 32))
			}
			require.Equal(t, compact(ref), compact(c.sk), "4-byte values")
		})
	}
}
