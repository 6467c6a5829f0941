// Package protobuf maps Protobuf schemas from a Schema Registry to Iceberg
// types ([Convert]) and decodes Protobuf payloads into Arrow builders
// ([Decoder]); docs/formats-protobuf.md is the mapping.
//
// The registry's .proto text, with its references as imports, is compiled
// by bufbuild/protocompile; the Confluent message index path selects the
// message. A [Decoder] is compiled once per (writer schema, table type)
// pair: a plan per message that finds a target field by field number.
// Decode walks the payload with protowire along that plan, into slots (one
// per target field of each message) and a flat list of list elements and
// map entries; strings and bytes stay offsets into the payload. Nothing
// reaches the Arrow builders until the whole payload checked out, and
// Append then replays the slots in table order. This is how Protobuf's
// wire rules fit a columnar row: fields come in any order, a repeated
// field may be split and packed or not, a scalar given twice takes the
// last value and an embedded message given twice is merged.
//
// Two shapes have no struct: a message without fields (a marker, e.g. a
// oneof arm or google.protobuf.Empty) is a boolean, true where present;
// google.protobuf.Struct, Value and ListValue, and a message field that
// recurs, are the JSON text of their value (json.go), rendered once the
// whole payload is read, so that a value given twice is merged first.
//
// Values are exact or the record is refused: uint64 is a decimal(20, 0),
// not a long that would wrap; an int32 varint outside the int32 range is
// an error, not a truncation; a Timestamp that is not a whole number of
// microseconds is an error, not a rounding.
package protobuf
