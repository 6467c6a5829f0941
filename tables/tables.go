// Package tables owns Mink's table definitions (docs/design.md §4.1): creating a
// table with its dead-letter table, partition start offsets and leases, and
// reading definitions back. It also names the objects of a table: its
// location and the keys of its data files (docs/design.md §4.5).
//
// tables.go holds the definitions, their validation and the names;
// store.go reads and writes them in Postgres (sql/, one statement a file);
// metadata_file.go stores and reads metadata files by key, for every
// package that does.
package tables

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
)

// DLQSuffix ends the name of a table's dead-letter table.
const DLQSuffix = "~dlq"

// Errors callers branch on.
var (
	ErrExists   = errors.New("table already exists")
	ErrNotFound = errors.New("table not found")
	// ErrLocationTaken is a table whose location would nest in another
	// table's or around it (HTTP 409, docs/design.md §4.1).
	ErrLocationTaken = errors.New("table location overlaps another table's")
	// ErrInvalid wraps every problem with a definition (HTTP 400).
	ErrInvalid = errors.New("invalid table definition")
	// ErrBadName is a table name that is not NAMESPACE.NAME (HTTP 400).
	ErrBadName = errors.New("invalid table name")
)

// Definition is what a user gives to create a table (admin API body).
type Definition struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Topic     string `json:"topic"`
	// ValueFormat: raw | string | json | avro | protobuf | json-schema.
	// KeyFormat: raw (default) | string | avro | protobuf | json-schema.
	ValueFormat string `json:"value_format"`
	KeyFormat   string `json:"key_format,omitempty"`
	// Schema is an Iceberg schema in the spec's JSON form, required for
	// json values (unless Infer). Field ids are reassigned after the
	// _kafka column. For registry formats the admin API fills it from the
	// registry (the decoded key column first, then the value columns).
	Schema json.RawMessage `json:"schema,omitempty"`
	// Subject and KeySubject name the registry subjects whose versions
	// define the columns of registry formats: default
	// "<topic>-value" and "<topic>-key" (Confluent's TopicNameStrategy).
	Subject    string `json:"subject,omitempty"`
	KeySubject string `json:"key_subject,omitempty"`
	// SubjectVersion and KeySubjectVersion choose the subject version
	// whose schema gives the first columns (from 1); 0, the default, lets
	// the create choose the version whose evolution lands the most
	// retained records (docs/design.md §4.7).
	SubjectVersion    int `json:"subject_version,omitempty"`
	KeySubjectVersion int `json:"key_subject_version,omitempty"`
	// Message and KeyMessage (protobuf formats) name the one message,
	// fully qualified (package.Outer.Inner), whose records the table
	// holds: default the first message of the subject's latest schema.
	// A record of another message is a dead letter naming both (table
	// properties mink.protobuf.value-message, mink.protobuf.key-message).
	Message    string `json:"message,omitempty"`
	KeyMessage string `json:"key_message,omitempty"`
	// Infer (json values only): the schema is inferred from the records
	// Kafka retains when the table is created, and evolves as new fields
	// appear (table property mink.json.infer).
	Infer bool `json:"infer,omitempty"`
	// Start is where indexing begins: earliest (default) or latest.
	Start      string            `json:"start,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	// Fields are what the registry schemas of a registry format say of
	// the columns of Schema beyond their Iceberg types (codec/avro.Fields
	// JSON by field id: Avro defaults and aliases), kept with schema
	// version 0. The admin API fills it with Schema; never from a request.
	Fields json.RawMessage `json:"-"`
}

// Table is a stored table definition and its committed state.
type Table struct {
	ID          int64             `json:"id"`
	Namespace   string            `json:"namespace"`
	Name        string            `json:"name"`
	Topic       string            `json:"topic"`
	ValueFormat codec.Format      `json:"value_format"`
	KeyFormat   codec.Format      `json:"key_format"`
	Schema      *iceberg.Schema   `json:"schema"`
	Start       string            `json:"start"`
	Properties  map[string]string `json:"properties"`
	UUID        uuid.UUID         `json:"table_uuid"`
	// Location is s3://<warehouse>/<ns levels joined by />/<name>.
	Location string `json:"location"`
	// DLQOf is the id of the table whose dead letters this table holds.
	DLQOf              *int64 `json:"dlq_of,omitempty"`
	MetadataLocation   string `json:"metadata_location"`
	CurrentSnapshotID  *int64 `json:"current_snapshot_id,omitempty"`
	LastSequenceNumber int64  `json:"last_sequence_number"`
}

// FullName is "<namespace>.<name>".
func (t *Table) FullName() string { return t.Namespace + "." + t.Name }

// WarehouseLocation is the location prefix of every table of warehouse,
// "s3://<warehouse>/": a table's location is the prefix followed by its key
// (Key).
func WarehouseLocation(warehouse string) string { return "s3://" + warehouse + "/" }

// WarehouseLocation is the prefix of t's location before its key,
// "s3://<warehouse>/": the location of one of t's files is the prefix
// followed by the file's key (DataFileKey, Key).
func (t *Table) WarehouseLocation() string { return t.Location[:len(t.Location)-len(Key(t.Location))] }

// Key returns the object key (below the warehouse) of a location.
func Key(location string) string {
	rest := strings.TrimPrefix(location, "s3://")
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[i+1:]
	}
	return rest
}

// DataFileKey is the key of the data file of range [start, end) of a
// partition, encoded by encoder version v (docs/design.md §4.5).
func (t *Table) DataFileKey(partition int32, start, end int64, v int) string {
	return fmt.Sprintf("%s/data/%d/%d-%d-%d.parquet", Key(t.Location), partition, start, end, v)
}

// DataFileKeyGen is DataFileKey for generation gen of the range: 0 is the
// plain key; a file that replaces another of the same range (re-indexed
// after log compaction) has gen > 0 and the key
// "…/<start>-<end>-<v>-g<gen>.parquet".
func (t *Table) DataFileKeyGen(partition int32, start, end int64, v, gen int) string {
	return t.DataFileKeyOf(DataFileRef{Partition: partition, Start: start, End: end, Version: v, Generation: gen})
}

// DataFileKeyOf is the key of ref in t (ref.TableKey is ignored):
// "…/data/<p>/<start>-<end>-<v>[-s<schema>][-g<gen>].parquet", where the
// schema version (docs/design.md §4.7) appears from version 1 on, so the
// keys of tables whose schema never changed stay as they were.
func (t *Table) DataFileKeyOf(ref DataFileRef) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/data/%d/%d-%d-%d", Key(t.Location), ref.Partition, ref.Start, ref.End, ref.Version)
	if ref.Schema > 0 {
		fmt.Fprintf(&b, "-s%d", ref.Schema)
	}
	if ref.Generation > 0 {
		fmt.Fprintf(&b, "-g%d", ref.Generation)
	}
	b.WriteString(".parquet")
	return b.String()
}

// DataFileRef is a parsed data file key.
type DataFileRef struct {
	TableKey   string // "<ns path>/<name>"
	Partition  int32
	Start, End int64
	Version    int
	Schema     int // the table schema version: 0, or n of a "-s<n>" suffix
	Generation int // 0, or n of a "-g<n>" suffix (DataFileKeyGen)
}

// ParseDataFileKey parses
// "<ns path>/<name>/data/<p>/<start>-<end>-<v>[-s<schema>][-g<gen>].parquet".
func ParseDataFileKey(key string) (DataFileRef, bool) {
	i := strings.LastIndex(key, "/data/")
	if i <= 0 {
		return DataFileRef{}, false
	}
	parts := strings.Split(key[i+len("/data/"):], "/")
	if len(parts) != 2 || !strings.HasSuffix(parts[1], ".parquet") {
		return DataFileRef{}, false
	}
	p, err := strconv.ParseInt(parts[0], 10, 32)
	if err != nil {
		return DataFileRef{}, false
	}
	nums := strings.Split(strings.TrimSuffix(parts[1], ".parquet"), "-")
	gen, schema := 0, 0
	if n, ok := suffix(nums, 'g'); ok {
		if n <= 0 {
			return DataFileRef{}, false
		}
		gen, nums = n, nums[:len(nums)-1]
	}
	if n, ok := suffix(nums, 's'); ok {
		if n <= 0 {
			return DataFileRef{}, false
		}
		schema, nums = n, nums[:len(nums)-1]
	}
	if len(nums) != 3 {
		return DataFileRef{}, false
	}
	s, err1 := strconv.ParseInt(nums[0], 10, 64)
	e, err2 := strconv.ParseInt(nums[1], 10, 64)
	v, err3 := strconv.Atoi(nums[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return DataFileRef{}, false
	}
	return DataFileRef{TableKey: key[:i], Partition: int32(p), Start: s, End: e, Version: v, Schema: schema, Generation: gen}, true
}

// suffix parses the last of nums as "<c><n>" (n in canonical decimal
// form; -1 when it is not), when there are more than three.
func suffix(nums []string, c byte) (int, bool) {
	if len(nums) <= 3 {
		return 0, false
	}
	last := nums[len(nums)-1]
	if len(last) < 2 || last[0] != c {
		return 0, false
	}
	n, err := strconv.Atoi(last[1:])
	if err != nil || strconv.Itoa(n) != last[1:] {
		return -1, true
	}
	return n, true
}

// nameRE is what a namespace level or table name may be: it must fit in
// an S3 key and an engine's identifier without quoting surprises.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]{0,127}$`)

// ParseName splits "ns.name" (ns may have several dot-separated levels).
// Errors wrap ErrBadName: no dot, an empty part, or text no table name can
// hold (U+0000, invalid UTF-8: PostgreSQL would refuse the lookup itself).
func ParseName(full string) (ns, name string, err error) {
	if !utf8.ValidString(full) || strings.IndexByte(full, 0) >= 0 {
		return "", "", fmt.Errorf("%w: %q is not valid UTF-8 text without U+0000", ErrBadName, full)
	}
	i := strings.LastIndexByte(full, '.')
	if i <= 0 || i == len(full)-1 {
		return "", "", fmt.Errorf("%w: %q must be NAMESPACE.NAME", ErrBadName, full)
	}
	return full[:i], full[i+1:], nil
}

func validate(def *Definition) error {
	for _, level := range strings.Split(def.Namespace, ".") {
		if !nameRE.MatchString(level) {
			return fmt.Errorf("%w: namespace %q: each level must match %s", ErrInvalid, def.Namespace, nameRE)
		}
	}
	if !nameRE.MatchString(def.Name) {
		return fmt.Errorf("%w: name %q must match %s", ErrInvalid, def.Name, nameRE)
	}
	if def.Topic == "" {
		return fmt.Errorf("%w: topic is required", ErrInvalid)
	}
	// PostgreSQL's text and jsonb hold neither U+0000 nor invalid UTF-8.
	texts := []string{def.Topic, def.Subject, def.KeySubject, def.Message, def.KeyMessage}
	for k, v := range def.Properties {
		texts = append(texts, k, v)
	}
	for _, s := range texts {
		if err := checkText(s); err != nil {
			return err
		}
	}
	if def.KeyFormat == "" {
		def.KeyFormat = string(codec.Raw)
	}
	if def.Start == "" {
		def.Start = "earliest"
	}
	if def.Start != "earliest" && def.Start != "latest" {
		return fmt.Errorf("%w: start must be earliest or latest, not %q", ErrInvalid, def.Start)
	}
	switch codec.Format(def.ValueFormat) {
	case codec.Raw, codec.String, codec.JSON, codec.Avro, codec.Protobuf, codec.JSONSchema:
	default:
		return fmt.Errorf("%w: value format %q: must be raw, string, json, avro, protobuf or json-schema", ErrInvalid, def.ValueFormat)
	}
	switch codec.Format(def.KeyFormat) {
	case codec.Raw, codec.String, codec.Avro, codec.Protobuf, codec.JSONSchema:
	default:
		return fmt.Errorf("%w: key format %q: must be raw, string, avro, protobuf or json-schema", ErrInvalid, def.KeyFormat)
	}
	if def.Infer && codec.Format(def.ValueFormat) != codec.JSON {
		return fmt.Errorf("%w: infer applies to value format json only", ErrInvalid)
	}
	if (def.Subject != "" && !codec.Format(def.ValueFormat).Registry()) || (def.KeySubject != "" && !codec.Format(def.KeyFormat).Registry()) {
		return fmt.Errorf("%w: a subject applies to avro, protobuf and json-schema formats only", ErrInvalid)
	}
	if (def.SubjectVersion != 0 && !codec.Format(def.ValueFormat).Registry()) || (def.KeySubjectVersion != 0 && !codec.Format(def.KeyFormat).Registry()) {
		return fmt.Errorf("%w: a subject version applies to avro, protobuf and json-schema formats only", ErrInvalid)
	}
	if def.SubjectVersion < 0 || def.KeySubjectVersion < 0 {
		return fmt.Errorf("%w: a subject version is a number from 1", ErrInvalid)
	}
	if (def.Message != "" && codec.Format(def.ValueFormat) != codec.Protobuf) || (def.KeyMessage != "" && codec.Format(def.KeyFormat) != codec.Protobuf) {
		return fmt.Errorf("%w: a message applies to the protobuf format only", ErrInvalid)
	}
	if codec.Format(def.ValueFormat) == codec.JSON && !def.Infer && (len(def.Schema) == 0 || string(def.Schema) == "null") {
		return fmt.Errorf("%w: value format json needs a declared schema (or infer)", ErrInvalid)
	}
	for k, v := range def.Properties {
		if err := checkProperty(codec.Format(def.ValueFormat), k, v); err != nil {
			return err
		}
	}
	if _, err := codec.JSONOptionsOf(def.Properties); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// checkText refuses what PostgreSQL's text and jsonb cannot hold: U+0000
// and invalid UTF-8. Errors wrap ErrInvalid.
func checkText(s string) error {
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return fmt.Errorf("%w: topic, subjects and properties must be valid UTF-8 without U+0000, not %q", ErrInvalid, s)
	}
	return nil
}

// checkProperty validates the value of a known property k of a table of
// value format f (docs/design.md §4.1). Errors wrap ErrInvalid.
func checkProperty(f codec.Format, k, v string) error {
	if ClientSetting(k) {
		return fmt.Errorf("%w: property %q configures a reader's storage access, endpoint or credentials (a FileIO or catalog client setting), not the table: engines such as PyIceberg take table properties into their file access settings, so it is refused",
			ErrInvalid, k)
	}
	// The spec names current-snapshot-timestamp-ms; iceberg-go's list
	// has current-snapshot-timestamp.
	if slices.Contains(table.ReservedProperties[:], k) || k == "current-snapshot-timestamp-ms" {
		return fmt.Errorf("%w: property %q is reserved: the table's metadata holds it, set by Mink (Iceberg table spec, \"Reserved table properties\")", ErrInvalid, k)
	}
	switch k {
	case icebergmeta.PropMaxSnapshotAge, icebergmeta.PropMinSnapshotsToKeep, icebergmeta.PropMaxSnapshots,
		icebergmeta.PropManifestMinCountToMerge, icebergmeta.PropManifestTargetSize:
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
			return fmt.Errorf("%w: property %s must be a non-negative integer, not %q", ErrInvalid, k, v)
		}
	case PropTargetFileSize:
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n <= 0 || n > MaxTargetFileSize || strings.TrimLeft(v, "0123456789") != "" {
			return fmt.Errorf("%w: property %s must be an integer of bytes from 1 to %d (a build holds a file's records in memory), not %q",
				ErrInvalid, k, MaxTargetFileSize, v)
		}
	case icebergmeta.PropThinning:
		if _, err := icebergmeta.ParseThinning(v); err != nil {
			return fmt.Errorf("%w: property %w", ErrInvalid, err)
		}
	case icebergmeta.PropManifestMergeEnabled:
		if v != "true" && v != "false" {
			return fmt.Errorf("%w: property %s must be true or false, not %q", ErrInvalid, k, v)
		}
	case codec.PropFieldMatching, codec.PropUnknownFields:
		if f != codec.JSON && f != codec.JSONSchema {
			return fmt.Errorf("%w: property %s applies to value formats json and json-schema only", ErrInvalid, k)
		}
	case PropGroupTags:
		if _, err := ParseGroupTags(v); err != nil {
			return err
		}
	default:
		if strings.HasPrefix(k, "mink.") {
			// A misspelt Mink property would do nothing, silently, and
			// could not be removed after create; Mink's own (topic,
			// formats, subjects) come from the definition's fields.
			return fmt.Errorf("%w: unknown Mink property %q (a table may set %s)", ErrInvalid, k, strings.Join(userMinkProperties, ", "))
		}
	}
	return nil
}

// userMinkProperties are the Mink properties (prefix "mink.") a table
// definition or a property change may set.
var userMinkProperties = []string{PropGroupTags, icebergmeta.PropThinning, icebergmeta.PropMaxSnapshots,
	codec.PropFieldMatching, codec.PropUnknownFields}

// Check validates what a definition says besides its schema (names,
// topic, formats, start, properties) and fills the defaults of key format
// and start. Errors wrap ErrInvalid.
func Check(def *Definition) error { return validate(def) }

// Schemas returns the table schema and dead-letter schema a definition
// produces, or an error wrapping ErrInvalid.
func Schemas(def *Definition) (table, dlq *iceberg.Schema, err error) {
	if err := validate(def); err != nil {
		return nil, nil, err
	}
	var declared *iceberg.Schema
	if len(def.Schema) > 0 && string(def.Schema) != "null" {
		declared = new(iceberg.Schema)
		if err := json.Unmarshal(def.Schema, declared); err != nil {
			return nil, nil, fmt.Errorf("%w: schema: %w", ErrInvalid, err)
		}
	}
	table, err = codec.TableSchema(codec.Format(def.KeyFormat), codec.Format(def.ValueFormat), declared)
	if err == nil {
		err = codec.CheckSchema(table)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	// The decoder refuses a schema its options cannot match unambiguously
	// (names equal under case folding with case-insensitive matching).
	opts, _ := codec.JSONOptionsOf(def.Properties) // checked by validate
	if _, err := codec.NewDecoderConfig(table, codec.DecoderConfig{Format: codec.Format(def.ValueFormat),
		KeyFormat: codec.Format(def.KeyFormat), JSON: opts}); err != nil {
		return nil, nil, fmt.Errorf("%w: schema: %w", ErrInvalid, err)
	}
	return table, codec.DLQSchema(codec.Format(def.KeyFormat)), nil
}

// Spec returns how the table's records become rows: its schema, formats
// and json decoder options (codec.JSONOptionsOf of its properties). For a
// dead-letter table, call it on the table it holds the dead letters of.
// Errors: a stored property with a value Schemas would refuse.
func (t *Table) Spec() (*datafile.Spec, error) {
	opts, err := codec.JSONOptionsOf(t.Properties)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.FullName(), err)
	}
	return &datafile.Spec{Schema: t.Schema, KeyFormat: t.KeyFormat, ValueFormat: t.ValueFormat, JSON: opts}, nil
}

// PartitionScope is the lease scope of a table's partition.
func PartitionScope(tableID int64, partition int32) string {
	return fmt.Sprintf("%d/partition/%d", tableID, partition)
}

// WriterScope is the lease scope of a table's writer.
func WriterScope(tableID int64) string { return fmt.Sprintf("%d/writer", tableID) }
