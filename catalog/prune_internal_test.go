package catalog

import (
	"math"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/datafile"
)

func pruneSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "_kafka", Required: true, Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 2, Name: "partition", Type: iceberg.PrimitiveTypes.Int32, Required: true},
			{ID: 3, Name: "offset", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		}}},
		iceberg.NestedField{ID: 11, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 12, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
	)
}

func enc(t *testing.T, l iceberg.Literal) []byte {
	b, err := l.MarshalBinary()
	require.NoError(t, err)
	return b
}

// The prune rules are iceberg-go's inclusive metrics evaluator's: each
// case below is one of its rules, with the answer it gives.
func TestMightMatch(t *testing.T) {
	// offsets [100, 199], partition 3, names "bob".."dave" with 2 nulls,
	// scores [1.5, 9] without NaN.
	file := datafile.Stats{RecordCount: 100,
		ValueCounts:     map[int]int64{2: 100, 3: 100, 11: 100, 12: 100},
		NullValueCounts: map[int]int64{2: 0, 3: 0, 11: 2, 12: 0},
		NaNValueCounts:  map[int]int64{12: 0},
		LowerBounds: map[int][]byte{2: enc(t, iceberg.Int32Literal(3)), 3: enc(t, iceberg.Int64Literal(100)),
			11: enc(t, iceberg.StringLiteral("bob")), 12: enc(t, iceberg.Float64Literal(1.5))},
		UpperBounds: map[int][]byte{2: enc(t, iceberg.Int32Literal(3)), 3: enc(t, iceberg.Int64Literal(199)),
			11: enc(t, iceberg.StringLiteral("dave")), 12: enc(t, iceberg.Float64Literal(9))},
	}
	off := iceberg.Reference("_kafka.offset")
	name := iceberg.Reference("name")
	score := iceberg.Reference("score")
	for _, c := range []struct {
		filter iceberg.BooleanExpression
		want   bool
	}{
		{iceberg.AlwaysTrue{}, true},
		{iceberg.AlwaysFalse{}, false},
		{iceberg.LessThan(off, int64(100)), false},
		{iceberg.LessThan(off, int64(101)), true},
		{iceberg.LessThanEqual(off, int64(100)), true},
		{iceberg.LessThanEqual(off, int64(99)), false},
		{iceberg.GreaterThan(off, int64(199)), false},
		{iceberg.GreaterThan(off, int64(198)), true},
		{iceberg.GreaterThanEqual(off, int64(199)), true},
		{iceberg.GreaterThanEqual(off, int64(200)), false},
		{iceberg.EqualTo(off, int64(150)), true},
		{iceberg.EqualTo(off, int64(99)), false},
		{iceberg.EqualTo(off, int64(200)), false},
		{iceberg.NotEqualTo(off, int64(150)), true},
		{iceberg.IsIn(off, int64(5), int64(250)), false},
		{iceberg.IsIn(off, int64(5), int64(150)), true},
		{iceberg.NotIn(off, int64(150)), true},
		{iceberg.NewNot(iceberg.LessThan(off, int64(200))), false}, // NOT is rewritten to >= 200
		{iceberg.NewAnd(iceberg.EqualTo(iceberg.Reference("_kafka.partition"), int32(3)), iceberg.EqualTo(off, int64(150))), true},
		{iceberg.NewAnd(iceberg.EqualTo(iceberg.Reference("_kafka.partition"), int32(4)), iceberg.EqualTo(off, int64(150))), false},
		{iceberg.NewOr(iceberg.EqualTo(off, int64(1)), iceberg.EqualTo(off, int64(150))), true},
		{iceberg.IsNull(name), true}, // 2 nulls
		{iceberg.NotNull(name), true},
		{iceberg.IsNull(score), false}, // null count 0
		{iceberg.IsNaN(score), false},  // NaN count 0
		{iceberg.NotNaN(score), true},
		{iceberg.EqualTo(name, "carl"), true},
		{iceberg.EqualTo(name, "eve"), false},
		{iceberg.EqualTo(name, "al"), false},
		{iceberg.StartsWith(name, "c"), true},
		{iceberg.StartsWith(name, "e"), false},
		{iceberg.StartsWith(name, "a"), false},
		{iceberg.StartsWith(name, "bobby"), true}, // bound "bob" truncated compares below
		{iceberg.NotStartsWith(name, "b"), true},  // name may hold nulls
		{iceberg.GreaterThan(score, 9.0), false},
		{iceberg.LessThan(score, 1.6), true},
	} {
		p, err := newPruner(pruneSchema(), c.filter, true)
		require.NoError(t, err, c.filter.String())
		got, err := p.mightMatch(&file)
		require.NoError(t, err, c.filter.String())
		require.Equal(t, c.want, got, c.filter.String())
	}

	// Empty files never match; a column of nulls only matches no value
	// predicate; a NaN lower bound cannot be trusted.
	p, err := newPruner(pruneSchema(), iceberg.AlwaysTrue{}, true)
	require.NoError(t, err)
	ok, err := p.mightMatch(&datafile.Stats{})
	require.NoError(t, err)
	require.False(t, ok)
	nulls := datafile.Stats{RecordCount: 5, ValueCounts: map[int]int64{11: 5}, NullValueCounts: map[int]int64{11: 5}}
	for _, f := range []iceberg.BooleanExpression{iceberg.EqualTo(name, "x"), iceberg.NotNull(name), iceberg.StartsWith(name, "x")} {
		p, err := newPruner(pruneSchema(), f, true)
		require.NoError(t, err)
		ok, err := p.mightMatch(&nulls)
		require.NoError(t, err)
		require.False(t, ok, f.String())
	}
	nan := datafile.Stats{RecordCount: 5, LowerBounds: map[int][]byte{12: enc(t, iceberg.Float64Literal(math.NaN()))},
		UpperBounds: map[int][]byte{12: enc(t, iceberg.Float64Literal(math.NaN()))}}
	p, err = newPruner(pruneSchema(), iceberg.LessThan(score, 0.0), true)
	require.NoError(t, err)
	ok, err = p.mightMatch(&nan)
	require.NoError(t, err)
	require.True(t, ok)
	// Names bind ignoring case only when asked.
	_, err = newPruner(pruneSchema(), iceberg.EqualTo(iceberg.Reference("NAME"), "x"), true)
	require.Error(t, err)
	_, err = newPruner(pruneSchema(), iceberg.EqualTo(iceberg.Reference("NAME"), "x"), false)
	require.NoError(t, err)
}

// The spans planFiles reads by are never narrower than the filter.
func TestPlanSpans(t *testing.T) {
	off := iceberg.Reference("_kafka.offset")
	part := iceberg.Reference("_kafka.partition")
	full := fullSpan
	for _, c := range []struct {
		filter    iceberg.BooleanExpression
		offset, p span
	}{
		{iceberg.AlwaysTrue{}, full, full},
		{iceberg.LessThan(off, int64(10)), span{lo: math.MinInt64, hi: 9}, full},
		{iceberg.NewAnd(iceberg.GreaterThanEqual(off, int64(5)), iceberg.LessThanEqual(off, int64(10))), span{lo: 5, hi: 10}, full},
		{iceberg.NewOr(iceberg.EqualTo(off, int64(5)), iceberg.EqualTo(off, int64(50))), span{lo: 5, hi: 50}, full},
		{iceberg.NewOr(iceberg.EqualTo(off, int64(5)), iceberg.EqualTo(iceberg.Reference("name"), "x")), full, full},
		{iceberg.NewAnd(iceberg.EqualTo(part, int32(2)), iceberg.GreaterThan(off, int64(7))), span{lo: 8, hi: math.MaxInt64}, span{lo: 2, hi: 2}},
		{iceberg.IsIn(off, int64(3), int64(1)), span{lo: 1, hi: 3}, full},
		{iceberg.NewAnd(iceberg.GreaterThan(off, int64(7)), iceberg.LessThan(off, int64(3))), span{empty: true}, full},
		{iceberg.NotEqualTo(off, int64(3)), full, full},
	} {
		p, err := newPruner(pruneSchema(), c.filter, true)
		require.NoError(t, err)
		sp := bound(p.expr)
		if c.offset.empty {
			require.True(t, sp.offset.empty, c.filter.String())
		} else {
			require.Equal(t, c.offset, sp.offset, c.filter.String())
		}
		require.Equal(t, c.p, sp.partition, c.filter.String())
	}
}
