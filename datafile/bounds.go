package datafile

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
)

// Bounds of fields nested in structs.
//
// iceberg-go v0.7.0 (table.DataFileFromMetadata) keeps only counts for
// every field nested in a struct, so it would give no bounds for
// _kafka.offset, _kafka.timestamp or _kafka.partition, the columns Mink and
// query engines prune on. Iceberg Java writes bounds for such fields; only
// fields inside lists and maps have none. structBounds fills that gap from
// the same Parquet footer statistics, with Iceberg's single-value
// serialization (spec Appendix D) and the default metrics mode,
// truncate(16) for strings and binaries. Decimal fields nested in structs
// get no bounds (their Parquet byte order needs care; counts only).

// boundsTruncateLength is the default Iceberg metrics mode truncate(16).
const boundsTruncateLength = 16

// structLeaves returns the primitive fields nested in at least one struct
// and in no list or map, by field id.
func structLeaves(sc *iceberg.Schema) map[int]iceberg.PrimitiveType {
	out := map[int]iceberg.PrimitiveType{}
	var walk func(fields []iceberg.NestedField, nested bool)
	walk = func(fields []iceberg.NestedField, nested bool) {
		for _, f := range fields {
			switch t := f.Type.(type) {
			case *iceberg.StructType:
				walk(t.FieldList, true)
			case iceberg.PrimitiveType:
				if nested {
					out[f.ID] = t
				}
			}
		}
	}
	walk(sc.Fields(), false)
	return out
}

// encodeStats returns the Appendix D serialization of a row group's min
// and max for an Iceberg type, and the order to compare them in.
func encodeStats(typ iceberg.PrimitiveType, st metadata.TypedStatistics) (lo, hi []byte, order func(a, b []byte) int, ok bool) {
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	le64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	switch s := st.(type) {
	case *metadata.BooleanStatistics:
		b := func(v bool) []byte {
			if v {
				return []byte{1}
			}
			return []byte{0}
		}
		return b(s.Min()), b(s.Max()), bytes.Compare, true
	case *metadata.Int32Statistics:
		switch typ.(type) {
		case iceberg.Int32Type, iceberg.DateType:
			return le32(uint32(s.Min())), le32(uint32(s.Max())), func(a, b []byte) int {
				return cmp.Compare(int32(binary.LittleEndian.Uint32(a)), int32(binary.LittleEndian.Uint32(b)))
			}, true
		}
	case *metadata.Int64Statistics:
		switch typ.(type) {
		case iceberg.Int64Type, iceberg.TimeType, iceberg.TimestampType, iceberg.TimestampTzType:
			return le64(uint64(s.Min())), le64(uint64(s.Max())), func(a, b []byte) int {
				return cmp.Compare(int64(binary.LittleEndian.Uint64(a)), int64(binary.LittleEndian.Uint64(b)))
			}, true
		}
	case *metadata.Float32Statistics:
		if _, isFloat := typ.(iceberg.Float32Type); isFloat && !isNaN(float64(s.Min())) && !isNaN(float64(s.Max())) {
			return le32(math.Float32bits(s.Min())), le32(math.Float32bits(s.Max())), func(a, b []byte) int {
				return cmp.Compare(math.Float32frombits(binary.LittleEndian.Uint32(a)), math.Float32frombits(binary.LittleEndian.Uint32(b)))
			}, true
		}
	case *metadata.Float64Statistics:
		if _, isDouble := typ.(iceberg.Float64Type); isDouble && !isNaN(s.Min()) && !isNaN(s.Max()) {
			return le64(math.Float64bits(s.Min())), le64(math.Float64bits(s.Max())), func(a, b []byte) int {
				return cmp.Compare(math.Float64frombits(binary.LittleEndian.Uint64(a)), math.Float64frombits(binary.LittleEndian.Uint64(b)))
			}, true
		}
	case *metadata.ByteArrayStatistics:
		switch typ.(type) {
		case iceberg.StringType, iceberg.BinaryType:
			return bytes.Clone(s.Min()), bytes.Clone(s.Max()), bytes.Compare, true
		}
	case *metadata.FixedLenByteArrayStatistics:
		switch typ.(type) {
		case iceberg.UUIDType, iceberg.FixedType:
			return bytes.Clone(s.Min()), bytes.Clone(s.Max()), bytes.Compare, true
		}
	}
	return nil, nil, nil, false
}

func isNaN(f float64) bool { return f != f }

// structBounds adds to lower and upper the bounds of the fields of
// structLeaves, aggregated over the row groups of meta. A column with a row
// group that has values but no min/max gets no bounds.
func structBounds(sc *iceberg.Schema, meta *metadata.FileMetaData, lower, upper map[int][]byte) error {
	leaves := structLeaves(sc)
	if len(leaves) == 0 {
		return nil
	}
	type agg struct {
		lo, hi  []byte
		order   func(a, b []byte) int
		invalid bool
	}
	aggs := map[int]*agg{}
	for rg := range meta.NumRowGroups() {
		group := meta.RowGroup(rg)
		for c := range group.NumColumns() {
			id := int(meta.Schema.Column(c).SchemaNode().FieldID())
			typ, ok := leaves[id]
			if !ok {
				continue
			}
			a := aggs[id]
			if a == nil {
				a = &agg{}
				aggs[id] = a
			}
			if a.invalid {
				continue
			}
			chunk, err := group.ColumnChunk(c)
			if err != nil {
				return err
			}
			set, err := chunk.StatsSet()
			if err != nil {
				return err
			}
			if !set {
				a.invalid = true
				continue
			}
			st, err := chunk.Statistics()
			if err != nil {
				return err
			}
			if st == nil {
				a.invalid = true
				continue
			}
			if !st.HasMinMax() {
				// Only nulls in this row group: nothing to bound.
				if st.HasNullCount() && st.NullCount() == chunk.NumValues() {
					continue
				}
				a.invalid = true
				continue
			}
			lo, hi, order, ok := encodeStats(typ, st)
			if !ok {
				a.invalid = true
				continue
			}
			a.order = order
			if a.lo == nil || order(lo, a.lo) < 0 {
				a.lo = lo
			}
			if a.hi == nil || order(hi, a.hi) > 0 {
				a.hi = hi
			}
		}
	}
	for id, a := range aggs {
		if a.invalid || a.lo == nil {
			continue
		}
		lo, hi := a.lo, a.hi
		switch leaves[id].(type) {
		case iceberg.StringType:
			lo, hi = truncateStringLower(lo), truncateStringUpper(hi)
		case iceberg.BinaryType:
			lo, hi = truncateBinaryLower(lo), truncateBinaryUpper(hi)
		}
		// As iceberg-go does for top-level columns: an empty bound is
		// left out.
		if len(lo) > 0 {
			lower[id] = lo
		}
		if len(hi) > 0 {
			upper[id] = hi
		}
	}
	return nil
}

func truncateBinaryLower(b []byte) []byte {
	if len(b) <= boundsTruncateLength {
		return b
	}
	return b[:boundsTruncateLength]
}

// truncateBinaryUpper returns the shortest prefix of at most 16 bytes,
// with its last byte incremented, that is above b; nil if there is none.
func truncateBinaryUpper(b []byte) []byte {
	if len(b) <= boundsTruncateLength {
		return b
	}
	out := bytes.Clone(b[:boundsTruncateLength])
	for i := len(out) - 1; i >= 0; i-- {
		if out[i] != 0xff {
			out[i]++
			return out[:i+1]
		}
	}
	return nil
}

func truncateStringLower(s []byte) []byte {
	n, i := 0, 0
	for i < len(s) && n < boundsTruncateLength {
		_, size := utf8.DecodeRune(s[i:])
		i += size
		n++
	}
	return s[:i]
}

// truncateStringUpper returns the first 16 code points of s with the last
// one that can be incremented incremented (Iceberg's truncate(16) upper
// bound); nil if there is none.
func truncateStringUpper(s []byte) []byte {
	prefix := truncateStringLower(s)
	if len(prefix) == len(s) {
		return s
	}
	runes := []rune(string(prefix))
	for i := len(runes) - 1; i >= 0; i-- {
		r := runes[i] + 1
		if r >= 0xD800 && r <= 0xDFFF {
			r = 0xE000
		}
		if r <= utf8.MaxRune {
			runes[i] = r
			return []byte(string(runes[:i+1]))
		}
	}
	return nil
}
