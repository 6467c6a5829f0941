package codec

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/codec/avro"
	"github.com/minkhq/mink/codec/jsonschema"
	"github.com/minkhq/mink/codec/protobuf"
	"github.com/minkhq/mink/codec/wire"
)

// WriterSchemas gives a Decoder the writer schema of a registry schema id
// (docs/design.md §4.7). The caller prepares every id of a range before
// the build (package schemas), so that decoding never waits on the
// registry: an error returned here makes the record a dead letter with
// the error, as is, as its reason (the registry does not know the id, or
// the table's schema cannot take the writer's, e.g. a string field that
// became an int); it names the role and the schema id itself, and must be
// the same on every rebuild of the range.
type WriterSchemas interface {
	WriterSchema(key bool, id int, indexes []int) (*wire.Schema, error)
}

// ConvertWriter returns the Iceberg type of values written with s in
// format (for Protobuf, the message at indexes): a struct for an Avro
// record, a Protobuf message or a JSON Schema object, whose fields become
// columns; any other type becomes one column (key, or value). Field ids
// are placeholders. The mappings are in docs/formats.md.
func ConvertWriter(format Format, s *wire.Schema, indexes []int) (iceberg.Type, error) {
	switch format {
	case Avro:
		return avro.Convert(s)
	case Protobuf:
		return protobuf.Convert(s, indexes)
	case JSONSchema:
		return jsonschema.Convert(s)
	default:
		return nil, fmt.Errorf("format %s: %w: not a registry format", format, ErrUnsupported)
	}
}

// ConvertWriterFields is ConvertWriter, and for Avro also what the schema
// says of its record fields beyond their Iceberg types, by field path
// (avro.ConvertFields: defaults and aliases); nil for other formats.
func ConvertWriterFields(format Format, s *wire.Schema, indexes []int) (iceberg.Type, map[string]avro.Field, error) {
	if format == Avro {
		return avro.ConvertFields(s)
	}
	t, err := ConvertWriter(format, s, indexes)
	return t, nil, err
}

// ReaderFields is implemented by the WriterSchemas of a range whose table
// version keeps Avro defaults and aliases (package schemas): the decoders
// resolve each writer against them (avro.NewDecoderFields).
type ReaderFields interface {
	ReaderFields() avro.Fields
}

// Columns returns the top-level columns of a converted writer type: the
// key column (key set) of type t, or the value columns: a struct's fields,
// or one column named value.
func Columns(t iceberg.Type, key bool) []iceberg.NestedField {
	if key {
		return []iceberg.NestedField{{ID: 1, Name: KeyColumnName, Type: t}}
	}
	if st, ok := t.(*iceberg.StructType); ok {
		return st.FieldList
	}
	return []iceberg.NestedField{{ID: 1, Name: "value", Type: t}}
}

// IndexesString is the text form of Protobuf message indexes used to
// store them ("" for none or [0], else "1.0").
func IndexesString(indexes []int) string {
	if len(indexes) == 0 || (len(indexes) == 1 && indexes[0] == 0) {
		return ""
	}
	var b strings.Builder
	for i, x := range indexes {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strconv.Itoa(x))
	}
	return b.String()
}

// formatDecoder is what the Avro and Protobuf decoders share.
type formatDecoder interface {
	Decode(payload []byte) error
	Append(cols []array.Builder)
}

// writerKey names one writer schema (and Protobuf message) of a range.
type writerKey struct {
	id      int
	indexes string
}

// writerDecoder decodes the payloads of one writer schema.
type writerDecoder struct {
	fd   formatDecoder // avro, protobuf
	json bool          // json-schema: the registryDecoder's JSON parser
	// json-schema: the writer schema's validator, and the decode plan
	// (the registryDecoder's, or its copy with the writer's unions).
	jv     *jsonschema.Validator
	jsRoot *node
	// structCols: the writer's type is a struct whose fields are the
	// target columns; else one column of the writer's type.
	structCols bool
	err        error // why the records of this writer are dead letters
}

// registryDecoder decodes one registry format into the value columns, or a
// key into the key column.
type registryDecoder struct {
	cfg     DecoderConfig
	columns []iceberg.NestedField // the table columns filled
	writers map[writerKey]*writerDecoder
	cur     *writerDecoder
	isNull  bool
	// json-schema: the JSON decoder, compiled once over the columns (or
	// the key struct's fields), and those fields.
	js       jsonParser
	root     *node
	jsFields []iceberg.NestedField
	// protobuf unknown fields of the last value
	pbUnknown int
	sub       []array.Builder // the key struct's field builders
	// last is the writer of the last value decoded, lastID its schema id
	// and lastIdx its raw Protobuf message indexes: consecutive records
	// mostly share a writer, and a header that repeats these bytes (the
	// indexes are a prefix-free varint list) needs no parsing or lookup.
	last    *writerDecoder
	lastID  int
	lastIdx []byte
}

func newRegistryDecoder(cfg DecoderConfig, columns []iceberg.NestedField) (*registryDecoder, error) {
	r := &registryDecoder{cfg: cfg, columns: columns, writers: make(map[writerKey]*writerDecoder)}
	if cfg.Format == JSONSchema {
		fields := columns
		if cfg.Key {
			st, ok := columns[0].Type.(*iceberg.StructType)
			if !ok {
				return nil, fmt.Errorf("codec: json-schema key column must be a struct, not %s", columns[0].Type)
			}
			fields = st.FieldList
		}
		root, err := compileStruct(fields, "", cfg.JSON)
		if err != nil {
			return nil, err
		}
		r.root, r.jsFields = root, fields
		r.js.opts = cfg.JSON
	}
	return r, nil
}

func (r *registryDecoder) what() string {
	if r.cfg.Key {
		return "key"
	}
	return "value"
}

// decode decodes one key or value in the wire format.
func (r *registryDecoder) decode(b []byte) error {
	r.cur, r.isNull, r.pbUnknown = nil, false, 0
	r.js.unknown = 0
	if b == nil {
		if r.cfg.Key {
			r.isNull = true // a null key is a null key column
			return nil
		}
		return fmt.Errorf("value is null (tombstone); %s values must carry a schema id", r.cfg.Format)
	}
	id, rest, err := wire.Header(b)
	if err != nil {
		return fmt.Errorf("%s: %w", r.what(), err)
	}
	w := r.last
	if w != nil && id == r.lastID && bytes.HasPrefix(rest, r.lastIdx) {
		rest = rest[len(r.lastIdx):]
	} else {
		var indexes []int
		payload := rest
		if r.cfg.Format == Protobuf {
			if indexes, payload, err = wire.MessageIndexes(rest); err != nil {
				return fmt.Errorf("%s: schema id %d: %w", r.what(), id, err)
			}
		}
		k := writerKey{id, IndexesString(indexes)}
		w = r.writers[k]
		if w == nil {
			w = r.compile(id, indexes)
			r.writers[k] = w
		}
		r.last, r.lastID, r.lastIdx = w, id, append(r.lastIdx[:0], rest[:len(rest)-len(payload)]...)
		rest = payload
	}
	if w.err != nil {
		return w.err
	}
	if w.json {
		if err := r.js.parse(w.jsRoot, rest); err != nil {
			return fmt.Errorf("%s (schema id %d): %w", r.what(), id, err)
		}
		// The value is decoded against its writer schema: one the schema
		// rejects (a property additionalProperties forbids, a const
		// broken, ...) is a dead letter, not a row without what it broke.
		if err := w.jv.Validate(rest); err != nil {
			r.js.unknown = 0
			return fmt.Errorf("%s (schema id %d): %w", r.what(), id, err)
		}
	} else if err := w.fd.Decode(rest); err != nil {
		return fmt.Errorf("%s (schema id %d): %w", r.what(), id, err)
	}
	if pb, ok := w.fd.(interface{ Unknown() int }); ok {
		r.pbUnknown = pb.Unknown()
	}
	r.cur = w
	return nil
}

// compile builds the decoder of one writer schema into the columns.
func (r *registryDecoder) compile(id int, indexes []int) *writerDecoder {
	fail := func(err error) *writerDecoder {
		return &writerDecoder{err: fmt.Errorf("%s: schema id %d: %w", r.what(), id, err)}
	}
	if r.cfg.Writers == nil {
		// A decoder made only to check a schema (tables.Schemas).
		panic("codec: a registry format decoder without writer schemas")
	}
	s, err := r.cfg.Writers.WriterSchema(r.cfg.Key, id, indexes)
	if err != nil {
		// The reason as WriterSchemas gives it: it names the role and id
		// already ("value: schema id 7 is not in the schema registry").
		return &writerDecoder{err: err}
	}
	if r.cfg.Format == JSONSchema {
		jv, err := jsonschema.Cached(s)
		if err != nil {
			return fail(err)
		}
		root := r.root
		if len(jv.Unions()) > 0 {
			// The writer's unions mark structs of a plan of its own.
			if root, err = compileStruct(r.jsFields, "", r.cfg.JSON); err != nil {
				return fail(err)
			}
			if err := attachUnions(root, jv.Unions()); err != nil {
				return fail(err)
			}
		}
		return &writerDecoder{json: true, structCols: !r.cfg.Key, jv: jv, jsRoot: root}
	}
	wt, err := ConvertWriter(r.cfg.Format, s, indexes)
	if err != nil {
		return fail(err)
	}
	_, isStruct := wt.(*iceberg.StructType)
	var target iceberg.Type
	switch {
	case r.cfg.Key:
		target = r.columns[0].Type
	case isStruct:
		target = &iceberg.StructType{FieldList: r.columns}
	default:
		if len(r.columns) != 1 || r.columns[0].Name != "value" {
			return fail(errors.New("the writer's value is not a record, and the table has no single value column"))
		}
		target = r.columns[0].Type
	}
	var fd formatDecoder
	switch r.cfg.Format {
	case Avro:
		var fields avro.Fields
		if rf, ok := r.cfg.Writers.(ReaderFields); ok {
			fields = rf.ReaderFields()
		}
		fd, err = avro.NewDecoderFields(s, target, fields)
	case Protobuf:
		fd, err = protobuf.NewDecoder(s, indexes, target)
	}
	if err != nil {
		return fail(err)
	}
	return &writerDecoder{fd: fd, structCols: isStruct}
}

func (r *registryDecoder) unknown() int {
	if r.cur != nil && r.cur.json {
		return r.js.unknown
	}
	return r.pbUnknown
}

// append appends the last decoded key or value to cols.
func (r *registryDecoder) append(cols []array.Builder) {
	if r.isNull {
		cols[0].AppendNull()
		return
	}
	w := r.cur
	if r.cfg.Key && (w.json || w.structCols) {
		// The key column is a struct: fill its fields.
		sb := cols[0].(*array.StructBuilder)
		sb.Append(true)
		r.sub = r.sub[:0]
		for i := range sb.NumField() {
			r.sub = append(r.sub, sb.FieldBuilder(i))
		}
		cols = r.sub
	}
	if w.json {
		r.js.appendRoot(w.jsRoot, cols)
		return
	}
	w.fd.Append(cols)
}
