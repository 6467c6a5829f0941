// Package codec decodes Kafka records into rows, per format (docs/design.md §4.1,
// §4.2), and defines the table schemas those rows fill: the _kafka column,
// the value columns of each format, and the dead-letter schema.
package codec

import "github.com/apache/iceberg-go"

// Format names a record key or value encoding.
type Format string

// Formats Mink decodes.
const (
	Raw    Format = "raw"
	String Format = "string"
	JSON   Format = "json"
	// The Schema Registry formats: Confluent wire format (magic byte 0, a
	// 4-byte schema id, for Protobuf the message indexes), then the
	// payload, decoded with the writer's schema from the registry
	// (docs/formats.md).
	Avro       Format = "avro"
	Protobuf   Format = "protobuf"
	JSONSchema Format = "json-schema"
)

// Registry reports whether f is a Schema Registry format (avro, protobuf,
// json-schema).
func (f Format) Registry() bool { return f == Avro || f == Protobuf || f == JSONSchema }

// KeyColumnName is the top-level column (right after _kafka) that holds a
// key decoded in a registry format. _kafka.key keeps the key's bytes.
const KeyColumnName = "key"

// KeyColumns is the number of top-level columns between _kafka and the
// value columns: 1 (the decoded key) for a registry key format, else 0.
func KeyColumns(keyFormat Format) int {
	if keyFormat.Registry() {
		return 1
	}
	return 0
}

// TableSchema returns a table's Iceberg schema: the _kafka struct (field ids
// 1-10, pinned by a golden test) followed by the value columns of the format:
// raw → value binary, string → value string, json and the registry formats →
// the fields of the declared schema with fresh ids from 11 on. declared is
// nil for raw and string, required for the others; for a registry key format
// its first field is the decoded key column (KeyColumnName), and for a
// registry value format its fields are the converted writer schema's
// columns (a struct's fields, or one column named value).
//
// Fresh ids are assigned depth-first in pre-order: a field takes the next id,
// then the fields nested in its type (list element, map key then value,
// struct fields) take theirs before its next sibling. Names, types,
// required-ness and docs are kept, except that map values are always
// optional (ValueRequired false): iceberg-go v0.7.0's scan rebuilds a map
// with arrow.MapOf, whose values are nullable, and panics on a table that
// declares them required, so no reader through iceberg-go (engines, mink
// scan) could read the table. The decoders then store a null map value only
// where the record holds one. Initial/write defaults (format v3) are
// dropped. Errors: unsupported key format (json keys are not supported),
// json or a registry format without a declared schema, raw/string with one,
// a declared field named _kafka, a registry key format whose first declared
// field is not the key column, a declared type the decoders do not
// support, or types nested deeper than MaxTypeDepth (both wrap
// [ErrUnsupported]).
func TableSchema(keyFormat, valueFormat Format, declared *iceberg.Schema) (*iceberg.Schema, error) {
	return tableSchema(keyFormat, valueFormat, declared)
}

// DLQSchema returns the dead-letter table schema: _kafka, value binary,
// error string.
//
// Field ids: _kafka 1-10 as in [TableSchema], 11 value (binary, optional:
// the record's raw value bytes, null for a tombstone), 12 error (string,
// required: why the record could not be decoded). The key column is binary
// for every key format, so that the key's bytes are kept as they were.
//
// A record whose timestamp an Iceberg timestamptz cannot hold (outside
// ±9223372036854775 ms) has Kafka's "no timestamp" in _kafka: timestamp
// -1 ms (RecordBatch.NO_TIMESTAMP) with timestamp_type -1
// (NO_TIMESTAMP_TYPE), as Kafka reports a record without one, and its
// error names the raw value. (A null timestamp would need this schema's
// field 4 optional, a schema change every existing dead-letter table would
// have to take by evolution.)
func DLQSchema(keyFormat Format) *iceberg.Schema {
	// The key is kept as raw bytes whatever the key format: a key that is
	// not valid for its format (a string key that is not UTF-8) must reach
	// the dead-letter table unchanged.
	_ = keyFormat
	return iceberg.NewSchema(0,
		kafkaField(Raw),
		iceberg.NestedField{ID: FirstValueFieldID, Name: "value", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: FirstValueFieldID + 1, Name: "error", Type: iceberg.PrimitiveTypes.String, Required: true},
	)
}
