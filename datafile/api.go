// Package datafile is Mink's deterministic Parquet encoder (docs/design.md §4.5):
// the data file of an indexed range is a pure function of (table schema,
// encoder version, the Kafka records of the range). Writer settings are
// pinned here; any change that alters bytes must bump EncoderVersion, and
// the golden SHA-256 vectors in testdata guard that.
package datafile

import (
	"github.com/apache/iceberg-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
)

// EncoderVersion is the version of the byte layout this package produces.
// It is part of every data file path. Bump it with any change that alters
// output bytes (settings, library upgrade, column conversion).
//
// 2: JSON numbers and booleans convert to their text for string columns;
// a field given twice, an object none of whose keys matches a field, and a
// non-zero number that rounds to a zero float are dead letters; field
// matching and unknown-field options (codec.JSONOptions); _kafka.timestamp
// is the record's raw millisecond timestamp × 1000, and a timestamp outside
// what int64 microseconds hold makes the record a dead letter (it wrapped
// in 1).
//
// 3: the footer's created_by is "mink encoder version 3.0.0", which Parquet
// readers parse (see CreatedBy); the registry formats' decoding of issue 26
// (docs/formats.md): Avro defaults and aliases, Protobuf records of another
// message type and JSON Schema records their writer schema refuses are dead
// letters, empty, recursive and open types as markers and JSON text.
const EncoderVersion = 3

// Spec says how one table's records become rows.
type Spec struct {
	// Schema is the table's full Iceberg schema, _kafka first (see
	// codec.TableSchema).
	Schema *iceberg.Schema
	// KeyFormat and ValueFormat decode the record key and value.
	KeyFormat, ValueFormat codec.Format
	// JSON are the json decoder's options, from the table's properties
	// (codec.JSONOptionsOf); the zero value is the default.
	JSON codec.JSONOptions
	// Writers gives the writer schemas of registry formats (key or value),
	// prepared for the range (package schemas); nil for other formats.
	Writers codec.WriterSchemas
}

// Stats are the Iceberg column statistics of one data file, keyed by
// field id, in the form a manifest entry records them. Bounds use Iceberg's
// single-value serialization (Iceberg spec, Appendix D). It is stored as
// JSON in Postgres (data_files.stats).
type Stats struct {
	RecordCount     int64          `json:"record_count"`
	ColumnSizes     map[int]int64  `json:"column_sizes,omitempty"`
	ValueCounts     map[int]int64  `json:"value_counts,omitempty"`
	NullValueCounts map[int]int64  `json:"null_value_counts,omitempty"`
	NaNValueCounts  map[int]int64  `json:"nan_value_counts,omitempty"`
	LowerBounds     map[int][]byte `json:"lower_bounds,omitempty"`
	UpperBounds     map[int][]byte `json:"upper_bounds,omitempty"`
	SplitOffsets    []int64        `json:"split_offsets,omitempty"`
	// MinTimestamp and MaxTimestamp are the extremes of _kafka.timestamp in
	// microseconds since the Unix epoch (0 when the file is empty).
	MinTimestamp int64 `json:"min_timestamp_us"`
	MaxTimestamp int64 `json:"max_timestamp_us"`
}

// File is one encoded Parquet file.
type File struct {
	Bytes  []byte
	SHA256 [32]byte
	Stats  Stats
	// Sketches are the theta sketches of its primitive columns (see
	// Sketches); they are not part of Bytes.
	Sketches Sketches
}

// Result is the encoding of one range: the table's data file and the
// dead-letter file. Either is nil when it would hold no row.
type Result struct {
	Data *File
	DLQ  *File
	// Unknown counts the JSON fields of the range's values, at any depth,
	// that match no field of the schema (docs/design.md §4.2): left out of rows, or
	// the reason of a dead letter (codec.Decoder.Unknown says which records
	// count).
	Unknown int64
	// UnknownExamples are the first distinct paths of those fields (e.g.
	// "address.zip"), at most MaxUnknownExamples, in offset order.
	UnknownExamples []string
}

// MaxUnknownExamples bounds Result.UnknownExamples.
const MaxUnknownExamples = 10

// Build encodes the records of one range of one partition. records must be
// in offset order and hold no control records. Records whose key or value
// cannot be decoded become rows of the dead-letter file (docs/design.md §4.2); the
// error is returned only for a fault of the encoder itself.
//
// Records with a key format other than raw or string, a partition that
// differs from the first record's, or offsets that do not increase are an
// error of the caller. Header keys must be valid UTF-8 (they are strings in
// the table); a record with one that is not goes to the dead-letter file.
func Build(spec *Spec, records []*kgo.Record) (*Result, error) {
	return build(spec, records)
}
