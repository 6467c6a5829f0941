package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
)

// The values `mink scan` prints are exact: each text stands for one value
// of its column's type and reads back as that value.
//
// JSON (--format json) follows the Iceberg spec's JSON single-value
// serialization (Appendix D) for scalars, with names for struct fields:
//   - int, long: JSON numbers; boolean: true/false.
//   - float, double: JSON numbers, the shortest text that reads back as
//     the same float32 or float64 (1e-8, 0.1); NaN and the infinities,
//     which JSON numbers cannot hold, are the strings "NaN", "Infinity",
//     "-Infinity".
//   - decimal(P,S): a JSON string of the exact decimal text with S digits
//     after the point ("0.00000001", "-12.340"). A string, as Appendix D
//     has it, because JSON readers commonly parse numbers into float64,
//     which would round them without a word.
//   - string: a JSON string; uuid: its 8-4-4-4-12 text.
//   - binary, fixed(L): base64 (standard alphabet, padded), the form
//     Mink's json value format reads (codec/scalar.go).
//   - struct: an object of its fields by name, in schema order; list: an
//     array; map: an array of {"key": …, "value": …} objects, in order.
//   - timestamp: RFC 3339 in UTC for timestamptz, the wall clock for
//     timestamp, exact at any year (timestampString); date, time: as Arrow
//     formats them.
//
// Table and CSV cells are the same text without JSON's quotes for a
// scalar (a string cell is the string itself), and the JSON text for a
// list or map; struct columns are flattened into one column per field.

// appendJSON appends row i of col as JSON.
func appendJSON(b []byte, col arrow.Array, i int) []byte {
	if col.IsNull(i) {
		return append(b, "null"...)
	}
	switch a := col.(type) {
	case *array.Boolean:
		return strconv.AppendBool(b, a.Value(i))
	case *array.Int8:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Int32:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Int64:
		return strconv.AppendInt(b, a.Value(i), 10)
	case *array.Uint8:
		return strconv.AppendUint(b, uint64(a.Value(i)), 10)
	case *array.Uint16:
		return strconv.AppendUint(b, uint64(a.Value(i)), 10)
	case *array.Uint32:
		return strconv.AppendUint(b, uint64(a.Value(i)), 10)
	case *array.Uint64:
		return strconv.AppendUint(b, a.Value(i), 10)
	case *array.Float32:
		return appendFloat(b, float64(a.Value(i)), 32)
	case *array.Float64:
		return appendFloat(b, a.Value(i), 64)
	case *array.Decimal32:
		return appendString(b, a.Value(i).ToString(decimalScale(a)))
	case *array.Decimal64:
		return appendString(b, a.Value(i).ToString(decimalScale(a)))
	case *array.Decimal128:
		return appendString(b, a.Value(i).ToString(decimalScale(a)))
	case *array.Decimal256:
		return appendString(b, a.Value(i).ToString(decimalScale(a)))
	case *array.String:
		return appendString(b, a.Value(i))
	case *array.LargeString:
		return appendString(b, a.Value(i))
	case *array.StringView:
		return appendString(b, a.Value(i))
	case *array.Binary:
		return appendString(b, base64.StdEncoding.EncodeToString(a.Value(i)))
	case *array.LargeBinary:
		return appendString(b, base64.StdEncoding.EncodeToString(a.Value(i)))
	case *array.BinaryView:
		return appendString(b, base64.StdEncoding.EncodeToString(a.Value(i)))
	case *extensions.UUIDArray:
		return appendString(b, a.Value(i).String())
	case *array.FixedSizeBinary:
		return appendString(b, base64.StdEncoding.EncodeToString(a.Value(i)))
	case *array.Timestamp:
		return appendString(b, timestampString(a.Value(i), a.DataType().(*arrow.TimestampType)))
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		b = append(b, '{')
		for f := 0; f < a.NumField(); f++ {
			if f > 0 {
				b = append(b, ',')
			}
			b = appendString(b, st.Field(f).Name)
			b = append(b, ':')
			b = appendJSON(b, a.Field(f), i)
		}
		return append(b, '}')
	case *array.Map:
		keys, items := a.Keys(), a.Items()
		start, end := a.ValueOffsets(i)
		b = append(b, '[')
		for j := start; j < end; j++ {
			if j > start {
				b = append(b, ',')
			}
			b = append(b, `{"key":`...)
			b = appendJSON(b, keys, int(j))
			b = append(b, `,"value":`...)
			b = appendJSON(b, items, int(j))
			b = append(b, '}')
		}
		return append(b, ']')
	case array.ListLike:
		values := a.ListValues()
		start, end := a.ValueOffsets(i)
		b = append(b, '[')
		for j := start; j < end; j++ {
			if j > start {
				b = append(b, ',')
			}
			b = appendJSON(b, values, int(j))
		}
		return append(b, ']')
	}
	// Dates, times and any other type: Arrow's own form.
	v, err := json.Marshal(col.GetOneForMarshal(i))
	if err != nil {
		return appendString(b, col.ValueStr(i))
	}
	return append(b, v...)
}

func decimalScale(a arrow.Array) int32 { return a.DataType().(arrow.DecimalType).GetScale() }

// appendFloat appends f, a float of bits bits, as its shortest exact JSON
// number (as encoding/json writes it), or a string for NaN and ±Inf.
func appendFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return appendString(b, "NaN")
	case math.IsInf(f, 1):
		return appendString(b, "Infinity")
	case math.IsInf(f, -1):
		return appendString(b, "-Infinity")
	}
	var v []byte
	if bits == 32 {
		v, _ = json.Marshal(float32(f))
	} else {
		v, _ = json.Marshal(f)
	}
	return append(b, v...)
}

// appendString appends s as a JSON string, without HTML escapes.
func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// cell is row i of col as a table or CSV cell: a scalar's text without
// JSON's quotes, or a list's or map's JSON; "null" for null.
func cell(col arrow.Array, i int) string {
	b := appendJSON(nil, col, i)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if json.Unmarshal(b, &s) == nil {
			return s
		}
	}
	return string(b)
}
