package protobuf

import (
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Append appends the last successfully decoded value to cols, the
// builders of the table's value columns (one per target field, in order),
// built for iceberg-go's table.SchemaToArrowSchema of the table. It
// appends nothing after a failed Decode; a builder that does not match
// its column is a programming error and panics.
func (d *Decoder) Append(cols []array.Builder) {
	if !d.ok {
		return
	}
	for i, f := range d.root.fields {
		d.appendField(f, d.slots[i], cols[i])
	}
}

func (d *Decoder) appendField(f *field, s slot, b array.Builder) {
	if f.absent {
		b.AppendNull()
		return
	}
	switch f.card {
	case cList:
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		vb := lb.ValueBuilder()
		for i := s.head; i != 0; i = d.elems[i-1].next {
			d.appendValue(&f.val, d.elems[i-1].v, vb)
		}
	case cMap:
		mb := b.(*array.MapBuilder)
		mb.Append(true)
		kb, ib := mb.KeyBuilder(), mb.ItemBuilder()
		for i := s.head; i != 0; i = d.elems[i-1].next {
			e := &d.elems[i-1]
			if e.drop {
				continue
			}
			d.appendValue(&f.key, e.k, kb)
			d.appendValue(&f.val, e.v, ib)
		}
	default:
		if s.set {
			d.appendValue(&f.val, s.v, b)
		} else if f.presence == pImplicit {
			d.appendValue(&f.val, val{}, b) // Protobuf: absent is the zero value
		} else {
			b.AppendNull()
		}
	}
}

func (d *Decoder) appendValue(v *vnode, x val, b array.Builder) {
	r := v.r
	if r == rWrapper {
		r = v.inner
	}
	switch v.o {
	case oInt32:
		b.(*array.Int32Builder).Append(int32(int64(x.u)))
	case oInt64:
		if r == rDuration {
			us, _ := micros(int64(x.u), int32(x.n)) // checked by Decode
			b.(*array.Int64Builder).Append(us)
		} else {
			b.(*array.Int64Builder).Append(int64(x.u))
		}
	case oFloat32:
		b.(*array.Float32Builder).Append(math.Float32frombits(uint32(x.u)))
	case oFloat64:
		if r == rFloat {
			b.(*array.Float64Builder).Append(float64(math.Float32frombits(uint32(x.u))))
		} else {
			b.(*array.Float64Builder).Append(math.Float64frombits(x.u))
		}
	case oBool:
		b.(*array.BooleanBuilder).Append(x.u != 0)
	case oDecimal:
		b.(*array.Decimal128Builder).Append(decimal128.FromU64(x.u))
	case oString:
		sb := b.(*array.StringBuilder)
		if r == rEnum {
			if name, ok := v.enum[int32(x.u)]; ok {
				sb.Append(name)
			} else {
				d.scratch = strconv.AppendInt(d.scratch[:0], int64(int32(x.u)), 10)
				sb.BinaryBuilder.Append(d.scratch)
			}
		} else if r == rJSON {
			t := &d.texts[x.u]
			sb.BinaryBuilder.Append(d.text[t.start:t.end])
		} else {
			sb.BinaryBuilder.Append(d.payload[x.u : x.u+uint64(x.n)])
		}
	case oBinary:
		b.(*array.BinaryBuilder).Append(d.payload[x.u : x.u+uint64(x.n)])
	case oTimestamp:
		us, _ := micros(int64(x.u), int32(x.n)) // checked by Decode
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(us))
	case oStruct:
		sb := b.(*array.StructBuilder)
		sb.Append(true)
		base := int(x.u)
		for i, f := range v.msg.fields {
			d.appendField(f, d.slots[base+i], sb.FieldBuilder(i))
		}
	}
}
