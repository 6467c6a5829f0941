package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/apache/iceberg-go"
)

// Field ids of the _kafka column (docs/design.md §4.2). They are assigned once and
// never reused; codec's golden test pins them.
const (
	KafkaFieldID         = 1
	PartitionFieldID     = 2
	OffsetFieldID        = 3
	TimestampFieldID     = 4
	TimestampTypeFieldID = 5
	KeyFieldID           = 6
	HeadersFieldID       = 7
	HeaderFieldID        = 8 // the list element of headers
	HeaderKeyFieldID     = 9
	HeaderValueFieldID   = 10
	// FirstValueFieldID is the id of the first value column; value columns
	// take ids from here on.
	FirstValueFieldID = 11
)

// KafkaColumn is the name of the first column of every Mink table.
const KafkaColumn = "_kafka"

// ErrUnsupported is wrapped by the errors TableSchema returns for a format
// or type this package cannot decode.
var ErrUnsupported = errors.New("unsupported")

func keyType(f Format) iceberg.Type {
	if f == String {
		return iceberg.PrimitiveTypes.String
	}
	return iceberg.PrimitiveTypes.Binary
}

func kafkaField(keyFormat Format) iceberg.NestedField {
	return iceberg.NestedField{
		ID: KafkaFieldID, Name: KafkaColumn, Required: true,
		Doc: "Kafka record metadata",
		Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: PartitionFieldID, Name: "partition", Type: iceberg.PrimitiveTypes.Int32, Required: true},
			{ID: OffsetFieldID, Name: "offset", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			{ID: TimestampFieldID, Name: "timestamp", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
			{ID: TimestampTypeFieldID, Name: "timestamp_type", Type: iceberg.PrimitiveTypes.Int32, Required: true,
				Doc: "0 create time, 1 log append time"},
			{ID: KeyFieldID, Name: "key", Type: keyType(keyFormat)},
			{ID: HeadersFieldID, Name: "headers", Type: &iceberg.ListType{
				ElementID: HeaderFieldID, ElementRequired: true,
				Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
					{ID: HeaderKeyFieldID, Name: "key", Type: iceberg.PrimitiveTypes.String, Required: true},
					{ID: HeaderValueFieldID, Name: "value", Type: iceberg.PrimitiveTypes.Binary},
				}},
			}},
		}},
	}
}

func checkKeyFormat(f Format) error {
	switch f {
	case Raw, String, Avro, Protobuf, JSONSchema:
		return nil
	case JSON:
		return fmt.Errorf("key format json: %w (not yet)", ErrUnsupported)
	default:
		return fmt.Errorf("key format %q: %w", f, ErrUnsupported)
	}
}

func tableSchema(keyFormat, valueFormat Format, declared *iceberg.Schema) (*iceberg.Schema, error) {
	if err := checkKeyFormat(keyFormat); err != nil {
		return nil, err
	}
	kafka := kafkaField(keyFormat)
	switch valueFormat {
	case Raw, String:
		if declared != nil {
			return nil, fmt.Errorf("value format %s takes no declared schema", valueFormat)
		}
		typ := iceberg.PrimitiveTypes.Binary
		if valueFormat == String {
			typ = iceberg.PrimitiveTypes.String
		}
		return iceberg.NewSchema(0, kafka,
			iceberg.NestedField{ID: FirstValueFieldID, Name: "value", Type: typ}), nil
	case JSON, Avro, Protobuf, JSONSchema:
		if declared == nil {
			return nil, fmt.Errorf("value format %s needs a declared schema", valueFormat)
		}
		// A Protobuf message may have no fields (a KeepAlive {}): rows of
		// _kafka (and the key) only.
		if len(declared.Fields()) <= KeyColumns(keyFormat) && valueFormat != Protobuf {
			return nil, fmt.Errorf("value format %s: declared schema has no value field", valueFormat)
		}
		if keyFormat.Registry() && declared.Fields()[0].Name != KeyColumnName {
			return nil, fmt.Errorf("key format %s: the first declared field must be the key column %q", keyFormat, KeyColumnName)
		}
		// JSON object keys are strings; Avro and Protobuf map keys may be
		// any primitive.
		ids := idAllocator{next: FirstValueFieldID, anyMapKey: valueFormat == Avro || valueFormat == Protobuf || keyFormat == Avro || keyFormat == Protobuf}
		fields := []iceberg.NestedField{kafka}
		if err := uniqueNames(declared.Fields(), ""); err != nil {
			return nil, err
		}
		for _, f := range declared.Fields() {
			if f.Name == KafkaColumn {
				return nil, fmt.Errorf("declared field %q: the name is reserved for Kafka metadata", KafkaColumn)
			}
			nf, err := ids.field(f, f.Name)
			if err != nil {
				return nil, err
			}
			fields = append(fields, nf)
		}
		return iceberg.NewSchema(0, fields...), nil
	default:
		return nil, fmt.Errorf("value format %q: %w", valueFormat, ErrUnsupported)
	}
}

// uniqueNames checks that no two fields of one struct share a name: a JSON
// key could fill only one of them and the other would always be null
// (Java Iceberg refuses such a schema too: "multiple fields for name").
func uniqueNames(fields []iceberg.NestedField, prefix string) error {
	seen := make(map[string]bool, len(fields))
	for _, f := range fields {
		if seen[f.Name] {
			return fmt.Errorf("declared field %s%s: the name appears twice in one struct", prefix, f.Name)
		}
		seen[f.Name] = true
	}
	return nil
}

// MaxTypeDepth is the deepest nesting of types TableSchema accepts: a
// top-level column is at level 1, a struct field, list element or map key
// or value one level below its parent. The converters of registry schemas
// and JSON inference refuse deeper types with the same bound (their own
// MaxDepth); this one bounds declared schemas. A path is built per level,
// each as long as the levels above it, and query engines choke on nested
// types far earlier.
const MaxTypeDepth = 64

// idAllocator hands out fresh field ids in depth-first pre-order.
type idAllocator struct {
	next      int
	anyMapKey bool // map keys other than string (Avro, Protobuf)
	depth     int  // types nested above the one being allocated
}

// enter goes one level down to the type at path; leave comes back up.
func (a *idAllocator) enter(path string) error {
	if a.depth == MaxTypeDepth {
		return fmt.Errorf("field %s: types nested deeper than %d levels: %w", path, MaxTypeDepth, ErrUnsupported)
	}
	a.depth++
	return nil
}

func (a *idAllocator) leave() { a.depth-- }

func (a *idAllocator) id() int {
	id := a.next
	a.next++
	return id
}

func (a *idAllocator) field(f iceberg.NestedField, path string) (iceberg.NestedField, error) {
	if err := a.enter(path); err != nil {
		return iceberg.NestedField{}, err
	}
	defer a.leave()
	id := a.id()
	t, err := a.typ(f.Type, path)
	if err != nil {
		return iceberg.NestedField{}, err
	}
	return iceberg.NestedField{ID: id, Name: f.Name, Type: t, Required: f.Required, Doc: f.Doc}, nil
}

// nested is typ one level down: a list element, map key or map value.
func (a *idAllocator) nested(t iceberg.Type, path string) (iceberg.Type, error) {
	if err := a.enter(path); err != nil {
		return nil, err
	}
	defer a.leave()
	return a.typ(t, path)
}

func (a *idAllocator) typ(t iceberg.Type, path string) (iceberg.Type, error) {
	switch t := t.(type) {
	case *iceberg.StructType:
		if err := uniqueNames(t.FieldList, path+"."); err != nil {
			return nil, err
		}
		fields := make([]iceberg.NestedField, 0, len(t.FieldList))
		for _, f := range t.FieldList {
			nf, err := a.field(f, path+"."+f.Name)
			if err != nil {
				return nil, err
			}
			fields = append(fields, nf)
		}
		return &iceberg.StructType{FieldList: fields}, nil
	case *iceberg.ListType:
		id := a.id()
		elem, err := a.nested(t.Element, path+".element")
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{ElementID: id, Element: elem, ElementRequired: t.ElementRequired}, nil
	case *iceberg.MapType:
		if _, ok := t.KeyType.(iceberg.StringType); !ok && !a.anyMapKey {
			return nil, fmt.Errorf("field %s: map key type %s: %w (JSON object keys are strings)", path, t.KeyType, ErrUnsupported)
		}
		kid := a.id()
		vid := a.id()
		key, err := a.nested(t.KeyType, path+".key")
		if err != nil {
			return nil, err
		}
		val, err := a.nested(t.ValueType, path+".value")
		if err != nil {
			return nil, err
		}
		// Map values are always optional: iceberg-go v0.7.0's scan rebuilds
		// maps with arrow.MapOf, whose values are nullable, and panics on a
		// required value column ("mismatch data type").
		return &iceberg.MapType{KeyID: kid, KeyType: key, ValueID: vid, ValueType: val, ValueRequired: false}, nil
	case iceberg.BooleanType, iceberg.Int32Type, iceberg.Int64Type, iceberg.Float32Type,
		iceberg.Float64Type, iceberg.DateType, iceberg.TimeType, iceberg.TimestampType,
		iceberg.TimestampTzType, iceberg.StringType, iceberg.BinaryType, iceberg.UUIDType,
		iceberg.FixedType, iceberg.DecimalType:
		return t, nil
	default:
		return nil, fmt.Errorf("field %s: type %s: %w by the json decoder", path, t, ErrUnsupported)
	}
}

// MaxSchemaJSON bounds a table schema's JSON, in bytes. Every manifest
// carries the schema JSON in its Avro header, and the Avro writer under
// iceberg-go (twmb/avro's ocf) refuses a metadata value above 1 MiB: a
// larger schema makes a table that can never commit (about 17,000 columns
// with short names). Half of it leaves room for the rest of the header.
const MaxSchemaJSON = 512 << 10

// ErrSchemaTooLarge is wrapped by CheckSchemaSize's errors.
var ErrSchemaTooLarge = errors.New("table schema too large")

// CheckSchemaSize returns an error wrapping ErrSchemaTooLarge when the
// JSON of schema is larger than MaxSchemaJSON.
func CheckSchemaSize(schema *iceberg.Schema) error {
	b, err := json.Marshal(schema)
	if err != nil {
		return err
	}
	if len(b) > MaxSchemaJSON {
		return fmt.Errorf("%w: its JSON takes %d bytes (%d fields), more than %d (manifests carry it in an Avro header limited to 1 MiB)",
			ErrSchemaTooLarge, len(b), schema.HighestFieldID(), MaxSchemaJSON)
	}
	return nil
}

// ErrSchemaText is wrapped by CheckSchema's errors for a field name or doc
// that PostgreSQL cannot store.
var ErrSchemaText = errors.New("table schema text PostgreSQL cannot store")

// CheckSchema returns an error when schema cannot be stored: its JSON is
// larger than MaxSchemaJSON (CheckSchemaSize, ErrSchemaTooLarge), or a
// field name or doc, at any depth, is not valid UTF-8 or holds U+0000
// (ErrSchemaText). Schemas are kept in PostgreSQL jsonb, which holds
// neither (PostgreSQL docs, "JSON Types"): such a schema would fail in the
// database at create, and at every try of an evolution to it (a JSON key
// of an inferring table's record, a JSON Schema property of a registry
// subject). Call it before a schema is stored.
func CheckSchema(schema *iceberg.Schema) error {
	if err := checkText(schema.AsStruct().FieldList, ""); err != nil {
		return err
	}
	return CheckSchemaSize(schema)
}

func checkText(fields []iceberg.NestedField, path string) error {
	for _, f := range fields {
		p := f.Name
		if path != "" {
			p = path + "." + f.Name
		}
		for _, s := range []string{f.Name, f.Doc} {
			if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
				return fmt.Errorf("%w: field %q: its name or doc is not valid UTF-8 or holds U+0000", ErrSchemaText, p)
			}
		}
		if err := checkTypeText(f.Type, p); err != nil {
			return err
		}
	}
	return nil
}

func checkTypeText(t iceberg.Type, path string) error {
	switch t := t.(type) {
	case *iceberg.StructType:
		return checkText(t.FieldList, path)
	case *iceberg.ListType:
		return checkTypeText(t.Element, path+".element")
	case *iceberg.MapType:
		if err := checkTypeText(t.KeyType, path+".key"); err != nil {
			return err
		}
		return checkTypeText(t.ValueType, path+".value")
	}
	return nil
}
