// Package codec decodes Kafka records into rows, per format (design §4.1,
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
)

// TableSchema returns a table's Iceberg schema: the _kafka struct (field ids
// 1-10, pinned by a golden test) followed by the value columns of the format:
// raw → value binary, string → value string, json → the fields of the
// declared schema with fresh ids from 11 on. declared is nil for raw and
// string, required for json (inference comes later).
func TableSchema(keyFormat, valueFormat Format, declared *iceberg.Schema) (*iceberg.Schema, error) {
	panic("TODO")
}

// DLQSchema returns the dead-letter table schema: _kafka, value binary,
// error string.
func DLQSchema(keyFormat Format) *iceberg.Schema {
	panic("TODO")
}
