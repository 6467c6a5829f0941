package testkit

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// ExactDistinct counts the distinct non-null values of each sketched field
// of sc in at (the whole table, read back), as Iceberg's readers count
// them: the empty string and binary are not values (DataSketches ignores
// an empty update, as Iceberg Java's sketches do).
func ExactDistinct(sc *iceberg.Schema, at arrow.Table) map[int]int {
	sets := map[int]map[string]struct{}{}
	var walk func(f iceberg.NestedField, a arrow.Array, valid func(int) bool)
	walk = func(f iceberg.NestedField, a arrow.Array, valid func(int) bool) {
		switch ft := f.Type.(type) {
		case *iceberg.StructType:
			st := a.(*array.Struct)
			v := func(i int) bool { return st.IsValid(i) && (valid == nil || valid(i)) }
			for j, c := range ft.FieldList {
				walk(c, st.Field(j), v)
			}
		case iceberg.PrimitiveType:
			set := sets[f.ID]
			if set == nil {
				set = map[string]struct{}{}
				sets[f.ID] = set
			}
			for i := 0; i < a.Len(); i++ {
				if a.IsNull(i) || (valid != nil && !valid(i)) {
					continue
				}
				s := a.ValueStr(i)
				if s == "" {
					continue
				}
				set[s] = struct{}{}
			}
		}
	}
	for i, f := range sc.Fields() {
		for _, chunk := range at.Column(i).Data().Chunks() {
			walk(f, chunk, nil)
		}
	}
	out := map[int]int{}
	for id, s := range sets {
		out[id] = len(s)
	}
	return out
}
