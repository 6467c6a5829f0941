package codec

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// Decoder turns record values of one format into the value columns of one
// table schema (every top-level field after _kafka). Use it in two steps,
// so that a record is never half-appended: Decode checks and converts the
// whole value into an internal buffer, and only after it succeeded does
// Append copy the value into the Arrow builders.
//
// A Decoder is not safe for concurrent use; it reuses its buffers from one
// record to the next, so steady-state decoding does not allocate.
type Decoder struct {
	format Format
	root   *node // json: the top-level value fields
	value  []byte
	isNull bool
	js     jsonParser
	paths  [][]byte // UnknownPaths
	reg    *registryDecoder
}

// NewDecoder returns a decoder of values in format for schema, a table
// schema from [TableSchema] (_kafka first, then the value columns). opts
// steer the json format (the zero value is the default) and are ignored by
// the others. Errors: an unsupported format, a schema that does not start
// with _kafka, a schema whose value columns do not fit the format, or, for
// json, two fields of one struct whose names are equal (or equal under
// case folding with [MatchCaseInsensitive]).
//
// Registry formats need [NewDecoderConfig].
func NewDecoder(format Format, schema *iceberg.Schema, opts JSONOptions) (*Decoder, error) {
	return NewDecoderConfig(schema, DecoderConfig{Format: format, KeyFormat: Raw, JSON: opts})
}

// DecoderConfig says what a [Decoder] decodes.
type DecoderConfig struct {
	// Format is the format of what is decoded (the table's value format,
	// or its key format when Key is set).
	Format Format
	// KeyFormat is the table's key format: with a registry key format the
	// schema's column after _kafka is the decoded key (KeyColumns).
	KeyFormat Format
	// Key decodes record keys into the key column instead of values into
	// the value columns (registry key formats only).
	Key bool
	// JSON steers json and json-schema values.
	JSON JSONOptions
	// Writers gives the writer schemas of registry formats.
	Writers WriterSchemas
}

// NewDecoderConfig returns a decoder of values (or, with cfg.Key, keys)
// for schema, a table schema from [TableSchema]. Errors: those of
// NewDecoder. A registry format decoder without cfg.Writers only checks
// the schema: it panics on its first value.
func NewDecoderConfig(schema *iceberg.Schema, cfg DecoderConfig) (*Decoder, error) {
	format := cfg.Format
	if schema == nil {
		return nil, errors.New("codec: nil schema")
	}
	fields := schema.Fields()
	skip := 1 + KeyColumns(cfg.KeyFormat)
	// A Protobuf message without fields has no value columns.
	if len(fields) < skip || (len(fields) == skip && format != Protobuf) || fields[0].Name != KafkaColumn || fields[0].ID != KafkaFieldID {
		return nil, fmt.Errorf("codec: schema must start with %s (id %d) and have value columns", KafkaColumn, KafkaFieldID)
	}
	values := fields[skip:]
	if cfg.Key {
		if !cfg.KeyFormat.Registry() || cfg.Format != cfg.KeyFormat {
			return nil, fmt.Errorf("codec: key format %s is not decoded into a column", cfg.KeyFormat)
		}
		values = fields[1:2]
	}
	d := &Decoder{format: format}
	if format.Registry() {
		reg, err := newRegistryDecoder(cfg, values)
		if err != nil {
			return nil, err
		}
		d.reg = reg
		return d, nil
	}
	switch format {
	case Raw, String:
		want := iceberg.Type(iceberg.PrimitiveTypes.Binary)
		if format == String {
			want = iceberg.PrimitiveTypes.String
		}
		if len(values) != 1 || !values[0].Type.Equals(want) {
			return nil, fmt.Errorf("codec: value format %s needs exactly one %s value column", format, want)
		}
	case JSON:
		root, err := compileStruct(values, "", cfg.JSON)
		if err != nil {
			return nil, err
		}
		d.root = root
		d.js.opts = cfg.JSON
	default:
		return nil, fmt.Errorf("value format %q: %w", format, ErrUnsupported)
	}
	return d, nil
}

// Columns is the number of value columns Append fills.
func (d *Decoder) Columns() int {
	if d.reg != nil {
		return len(d.reg.columns)
	}
	if d.root != nil {
		return len(d.root.fields)
	}
	return 1
}

// Decode checks and converts one record value (nil for a tombstone). On
// error nothing is kept for Append, and the error says which field failed
// and why, e.g. `field properties.mag: cannot convert string "x" to double`.
//
// raw never fails (a tombstone is a null value); string fails on invalid
// UTF-8; json fails on invalid JSON, a top-level value that is not an
// object, a tombstone, a value that does not convert to its column type
// without loss, a missing or null required field (docs/design.md §4.2), a field
// given twice (two keys that match it), an object with at least one key
// and none that matches a field of its struct (the top-level object or a
// nested one; the error lists the unknown field paths), or, with
// [UnknownDeadLetter], any unknown field.
//
// value must not be modified until Append has been called: Append may copy
// bytes straight from it.
func (d *Decoder) Decode(value []byte) error {
	d.value, d.isNull = nil, true
	if d.reg != nil {
		return d.reg.decode(value)
	}
	switch d.format {
	case Raw:
	case String:
		if value != nil && !utf8.Valid(value) {
			return errors.New("value is not valid UTF-8")
		}
	case JSON:
		if value == nil {
			return errors.New("value is null (tombstone); json values must be objects")
		}
		if err := d.js.parse(d.root, value); err != nil {
			return err
		}
	}
	d.value, d.isNull = value, value == nil
	return nil
}

// Unknown is the number of JSON object fields of the last decoded value,
// at any depth, that match no field of the schema (docs/design.md §4.2: ignored and
// counted), when Decode succeeded or failed for those fields alone (no
// field matched, or [UnknownDeadLetter]); else 0. A field inside an
// unknown field is not counted again. It is 0 for raw and string.
func (d *Decoder) Unknown() int {
	if d.format == JSON {
		return d.js.unknown
	}
	if d.reg != nil {
		return d.reg.unknown()
	}
	return 0
}

// UnknownPaths returns the paths of the first unknown fields of the last
// decoded value (at most 10; all of them when Unknown() ≤ 10), in the
// order of the input: the names of the enclosing fields (as the schema
// spells them) and the key (as the value spells it), joined by dots, with
// "element" for a list element and "value" for a map value, as Iceberg
// names nested fields (e.g. "address.zip", "items.element.sku"). The
// slices are valid until the next Decode or UnknownPaths.
func (d *Decoder) UnknownPaths() [][]byte {
	d.paths = d.paths[:0]
	if d.format == JSON {
		d.paths = d.js.unknownPaths(d.paths)
	}
	if d.reg != nil && d.reg.cur != nil && d.reg.cur.json {
		d.paths = d.reg.js.unknownPaths(d.paths)
	}
	return d.paths
}

// Append appends the last successfully decoded value to cols, the builders
// of the value columns in schema order (len(cols) == Columns()), built for
// the Arrow schema of the table (iceberg-go's table.SchemaToArrowSchema, no
// large types). It panics if a builder does not match its column, which is
// a programming error.
func (d *Decoder) Append(cols []array.Builder) {
	if d.reg != nil {
		d.reg.append(cols)
		return
	}
	switch d.format {
	case Raw:
		b := cols[0].(*array.BinaryBuilder)
		if d.isNull {
			b.AppendNull()
		} else {
			b.Append(d.value)
		}
	case String:
		b := cols[0].(*array.StringBuilder)
		if d.isNull {
			b.AppendNull()
		} else {
			b.BinaryBuilder.Append(d.value)
		}
	case JSON:
		d.js.appendRoot(d.root, cols)
	}
}

// CheckKey reports whether a record key decodes in format: raw keys always
// do, string keys must be valid UTF-8. A null key is always valid (a null
// key column). Registry formats are checked by their key Decoder (nil
// here). Other formats are an error (see [TableSchema]).
func CheckKey(format Format, key []byte) error {
	switch format {
	case Raw, Avro, Protobuf, JSONSchema:
		return nil
	case String:
		if key != nil && !utf8.Valid(key) {
			return errors.New("key is not valid UTF-8")
		}
		return nil
	default:
		return checkKeyFormat(format)
	}
}
