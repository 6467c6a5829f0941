package codec

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
)

// appendRoot replays the tape of the last parsed value (a top-level
// struct header at position 0) into the value column builders.
func (p *jsonParser) appendRoot(root *node, cols []array.Builder) {
	for i, f := range root.fields {
		slot := p.tape[1+i].i
		if slot < 0 {
			cols[i].AppendNull()
			continue
		}
		p.appendValue(f, cols[i], int(slot))
	}
}

// appendValue appends the tape value at q to b and returns the position
// after it.
func (p *jsonParser) appendValue(n *node, b array.Builder, q int) int {
	e := &p.tape[q]
	if e.kind == tNull {
		b.AppendNull()
		return q + 1
	}
	switch n.kind {
	case kBool:
		b.(*array.BooleanBuilder).Append(e.i != 0)
	case kInt32:
		b.(*array.Int32Builder).Append(int32(e.i))
	case kInt64:
		b.(*array.Int64Builder).Append(e.i)
	case kFloat32:
		b.(*array.Float32Builder).Append(float32(math.Float64frombits(uint64(e.i))))
	case kFloat64:
		b.(*array.Float64Builder).Append(math.Float64frombits(uint64(e.i)))
	case kDate:
		b.(*array.Date32Builder).Append(arrow.Date32(e.i))
	case kTime:
		b.(*array.Time64Builder).Append(arrow.Time64(e.i))
	case kTimestamp, kTimestampTz:
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(e.i))
	case kString:
		b.(*array.StringBuilder).BinaryBuilder.Append(p.bytesOf(e))
	case kBinary:
		b.(*array.BinaryBuilder).Append(p.bytesOf(e))
	case kFixed:
		b.(*array.FixedSizeBinaryBuilder).Append(p.bytesOf(e))
	case kUUID:
		b.(*extensions.UUIDBuilder).AppendBytes([16]byte(p.bytesOf(e)))
	case kDecimal:
		b.(*array.Decimal128Builder).Append(decimal128.New(e.hi, uint64(e.i)))
	case kStruct:
		sb := b.(*array.StructBuilder)
		sb.Append(true)
		for i, f := range n.fields {
			slot := p.tape[q+1+i].i
			if slot < 0 {
				sb.FieldBuilder(i).AppendNull()
				continue
			}
			p.appendValue(f, sb.FieldBuilder(i), int(slot))
		}
		return int(e.i)
	case kList:
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		vb := lb.ValueBuilder()
		r := q + 1
		for range e.n {
			r = p.appendValue(n.elem, vb, r)
		}
		return int(e.i)
	case kMap:
		mb := b.(*array.MapBuilder)
		mb.Append(true)
		kb := mb.KeyBuilder().(*array.StringBuilder)
		ib := mb.ItemBuilder()
		r := q + 1
		for range e.n {
			kb.BinaryBuilder.Append(p.bytesOf(&p.tape[r]))
			r = p.appendValue(n.elem, ib, r+1)
		}
		return int(e.i)
	}
	return q + 1
}
