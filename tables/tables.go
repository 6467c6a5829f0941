// Package tables owns Mink's table definitions (docs/design.md §4.1): creating a
// table with its dead-letter table, partition start offsets and leases, and
// reading definitions back. It also names the objects of a table: its
// location and the keys of its data files (docs/design.md §4.5).
package tables

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
)

// The statements on the tables table and on what a table's creation
// stores with it (partitions, leases, metadata files), one file each under
// sql/.
var (
	//go:embed sql/table_insert.sql
	tableInsertSQL string
	//go:embed sql/table_by_id.sql
	tableByIDSQL string
	//go:embed sql/table_by_name.sql
	tableByNameSQL string
	//go:embed sql/table_by_location.sql
	tableByLocationSQL string
	//go:embed sql/table_dlq.sql
	tableDLQSQL string
	//go:embed sql/tables_list.sql
	tablesListSQL string
	//go:embed sql/table_delete.sql
	tableDeleteSQL string
	//go:embed sql/partition_insert.sql
	partitionInsertSQL string
	//go:embed sql/lease_partition_insert.sql
	leasePartitionInsertSQL string
	//go:embed sql/lease_writer_insert.sql
	leaseWriterInsertSQL string
)

// DLQSuffix ends the name of a table's dead-letter table.
const DLQSuffix = "~dlq"

// Errors callers branch on.
var (
	ErrExists   = errors.New("table already exists")
	ErrNotFound = errors.New("table not found")
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
	// ValueFormat and KeyFormat: raw | string | json. KeyFormat default raw.
	ValueFormat string `json:"value_format"`
	KeyFormat   string `json:"key_format,omitempty"`
	// Schema is an Iceberg schema in the spec's JSON form, required for
	// json values. Field ids are reassigned after the _kafka column.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Start is where indexing begins: earliest (default) or latest.
	Start      string            `json:"start,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
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
	if gen == 0 {
		return t.DataFileKey(partition, start, end, v)
	}
	return fmt.Sprintf("%s/data/%d/%d-%d-%d-g%d.parquet", Key(t.Location), partition, start, end, v, gen)
}

// DataFileRef is a parsed data file key.
type DataFileRef struct {
	TableKey   string // "<ns path>/<name>"
	Partition  int32
	Start, End int64
	Version    int
	Generation int // 0, or n of a "-g<n>" suffix (DataFileKeyGen)
}

// ParseDataFileKey parses "<ns path>/<name>/data/<p>/<start>-<end>-<v>.parquet".
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
	gen := 0
	if len(nums) == 4 && strings.HasPrefix(nums[3], "g") {
		g, err := strconv.Atoi(nums[3][1:])
		if err != nil || g <= 0 || strconv.Itoa(g) != nums[3][1:] {
			return DataFileRef{}, false
		}
		gen, nums = g, nums[:3]
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
	return DataFileRef{TableKey: key[:i], Partition: int32(p), Start: s, End: e, Version: v, Generation: gen}, true
}

// nameRE is what a namespace level or table name may be: it must fit in
// an S3 key and an engine's identifier without quoting surprises.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]{0,127}$`)

// ParseName splits "ns.name" (ns may have several dot-separated levels).
func ParseName(full string) (ns, name string, err error) {
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
	if def.KeyFormat == "" {
		def.KeyFormat = string(codec.Raw)
	}
	if def.Start == "" {
		def.Start = "earliest"
	}
	if def.Start != "earliest" && def.Start != "latest" {
		return fmt.Errorf("%w: start must be earliest or latest, not %q", ErrInvalid, def.Start)
	}
	for _, f := range []string{def.ValueFormat, def.KeyFormat} {
		switch codec.Format(f) {
		case codec.Raw, codec.String, codec.JSON:
		default:
			return fmt.Errorf("%w: format %q: must be raw, string or json", ErrInvalid, f)
		}
	}
	for k, v := range def.Properties {
		switch k {
		case icebergmeta.PropMaxSnapshotAge, icebergmeta.PropMinSnapshotsToKeep, icebergmeta.PropMaxSnapshots,
			icebergmeta.PropManifestMinCountToMerge, icebergmeta.PropManifestTargetSize:
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
				return fmt.Errorf("%w: property %s must be a non-negative integer, not %q", ErrInvalid, k, v)
			}
		case icebergmeta.PropManifestMergeEnabled:
			if v != "true" && v != "false" {
				return fmt.Errorf("%w: property %s must be true or false, not %q", ErrInvalid, k, v)
			}
		case codec.PropFieldMatching, codec.PropUnknownFields:
			if codec.Format(def.ValueFormat) != codec.JSON {
				return fmt.Errorf("%w: property %s applies to value format json only", ErrInvalid, k)
			}
		}
	}
	if _, err := codec.JSONOptionsOf(def.Properties); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

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
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	// The decoder refuses a schema its options cannot match unambiguously
	// (names equal under case folding with case-insensitive matching).
	opts, _ := codec.JSONOptionsOf(def.Properties) // checked by validate
	if _, err := codec.NewDecoder(codec.Format(def.ValueFormat), table, opts); err != nil {
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

// PartitionStart is where indexing of a partition begins.
type PartitionStart struct {
	Partition int32
	Offset    int64
}

// Create stores a table, its dead-letter table, one start offset and one
// partition lease per partition, the writer lease, and the initial (empty)
// metadata of both tables, in one transaction. def must have passed
// Schemas. It returns ErrExists when the name is taken.
func Create(ctx context.Context, pool *pgxpool.Pool, warehouse string, def Definition, starts []PartitionStart) (*Table, error) {
	schema, dlqSchema, err := Schemas(&def)
	if err != nil {
		return nil, err
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	t, err := insertTable(ctx, tx, warehouse, def, def.Name, schema, nil)
	if err != nil {
		return nil, err
	}
	if _, err := insertTable(ctx, tx, warehouse, def, def.Name+DLQSuffix, dlqSchema, &t.ID); err != nil {
		return nil, err
	}
	if err := insertPartitions(ctx, tx, t.ID, starts); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, leaseWriterInsertSQL, WriterScope(t.ID), t.ID); err != nil {
		return nil, err
	}
	return t, tx.Commit(ctx)
}

// AddPartitions records start offsets and partition leases for partitions
// the topic gained (docs/design.md §4.1: the writer, or a table load that
// sees them first, adds them). Existing ones are
// left as they are.
func AddPartitions(ctx context.Context, pool *pgxpool.Pool, tableID int64, starts []PartitionStart) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if err := insertPartitions(ctx, tx, tableID, starts); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// insertPartitions records the start offset and the partition lease of
// each of starts in tx; partitions already recorded are left as they are.
func insertPartitions(ctx context.Context, tx pgx.Tx, tableID int64, starts []PartitionStart) error {
	for _, s := range starts {
		if _, err := tx.Exec(ctx, partitionInsertSQL, tableID, s.Partition, s.Offset); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, leasePartitionInsertSQL, PartitionScope(tableID, s.Partition), tableID, s.Partition); err != nil {
			return err
		}
	}
	return nil
}

// PartitionScope is the lease scope of a table's partition.
func PartitionScope(tableID int64, partition int32) string {
	return fmt.Sprintf("%d/partition/%d", tableID, partition)
}

// WriterScope is the lease scope of a table's writer.
func WriterScope(tableID int64) string { return fmt.Sprintf("%d/writer", tableID) }

func insertTable(ctx context.Context, tx pgx.Tx, warehouse string, def Definition, name string, schema *iceberg.Schema, dlqOf *int64) (*Table, error) {
	id := uuid.New()
	location := WarehouseLocation(warehouse) + strings.ReplaceAll(def.Namespace, ".", "/") + "/" + name
	props := map[string]string{"mink.topic": def.Topic, "mink.value-format": def.ValueFormat, "mink.key-format": def.KeyFormat}
	for k, v := range def.Properties {
		props[k] = v
	}
	if dlqOf != nil {
		props["mink.dead-letters-of"] = def.Namespace + "." + def.Name
	}
	metaLoc, metaJSON, err := icebergmeta.NewTable(schema, location, id, props)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	schemaJSON, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	propsJSON, _ := json.Marshal(def.Properties)
	if def.Properties == nil {
		propsJSON = []byte("{}")
	}
	t := &Table{Namespace: def.Namespace, Name: name, Topic: def.Topic,
		ValueFormat: codec.Format(def.ValueFormat), KeyFormat: codec.Format(def.KeyFormat), Schema: schema,
		Start: def.Start, Properties: def.Properties, UUID: id, Location: location, DLQOf: dlqOf, MetadataLocation: metaLoc}
	if dlqOf != nil {
		t.ValueFormat = codec.Raw
	}
	err = tx.QueryRow(ctx, tableInsertSQL,
		t.Namespace, t.Name, t.Topic, string(t.ValueFormat), string(t.KeyFormat), schemaJSON, t.Start, propsJSON,
		id, location, dlqOf, metaLoc).Scan(&t.ID)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" {
			return nil, fmt.Errorf("%w: %s.%s", ErrExists, def.Namespace, name)
		}
		return nil, err
	}
	if err := InsertMetadataFile(ctx, tx, t.ID, Key(metaLoc), metaJSON); err != nil {
		return nil, err
	}
	return t, nil
}

// Querier is a pool, connection or transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Beginner is a pool or connection: what opens a transaction.
type Beginner interface {
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
}

// scanTable reads a table row in the columns of the table_*.sql statements.
func scanTable(row pgx.Row) (*Table, error) {
	var t Table
	var schemaJSON, propsJSON []byte
	var vf, kf string
	err := row.Scan(&t.ID, &t.Namespace, &t.Name, &t.Topic, &vf, &kf, &schemaJSON, &t.Start, &propsJSON,
		&t.UUID, &t.Location, &t.DLQOf, &t.MetadataLocation, &t.CurrentSnapshotID, &t.LastSequenceNumber)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	t.ValueFormat, t.KeyFormat = codec.Format(vf), codec.Format(kf)
	if t.Schema, err = parseSchema(schemaJSON); err != nil {
		return nil, fmt.Errorf("table %d: stored schema: %w", t.ID, err)
	}
	if err := json.Unmarshal(propsJSON, &t.Properties); err != nil {
		return nil, fmt.Errorf("table %d: stored properties: %w", t.ID, err)
	}
	return &t, nil
}

// schemas caches parsed schemas by their stored JSON: every table load
// reads its table row, and parsing the schema cost more than the query.
// Schemas are immutable once stored and few (tables × schema versions).
var (
	schemas     sync.Map // string → *iceberg.Schema
	schemaCount atomic.Int64
)

const maxCachedSchemas = 4096

// parseSchema returns the schema stored as b, shared and read-only.
func parseSchema(b []byte) (*iceberg.Schema, error) {
	if sc, ok := schemas.Load(string(b)); ok {
		return sc.(*iceberg.Schema), nil
	}
	sc := new(iceberg.Schema)
	if err := json.Unmarshal(b, sc); err != nil {
		return nil, err
	}
	if schemaCount.Load() < maxCachedSchemas {
		if _, loaded := schemas.LoadOrStore(string(b), sc); !loaded {
			schemaCount.Add(1)
		}
	}
	return sc, nil
}

// Get returns the table with id, or ErrNotFound.
func Get(ctx context.Context, q Querier, id int64) (*Table, error) {
	return scanTable(q.QueryRow(ctx, tableByIDSQL, id))
}

// GetByName returns the table ns.name, or ErrNotFound.
func GetByName(ctx context.Context, q Querier, ns, name string) (*Table, error) {
	return scanTable(q.QueryRow(ctx, tableByNameSQL, ns, name))
}

// GetByKey returns the table whose location key is tableKey.
func GetByKey(ctx context.Context, q Querier, warehouse, tableKey string) (*Table, error) {
	return scanTable(q.QueryRow(ctx, tableByLocationSQL, WarehouseLocation(warehouse)+tableKey))
}

// DLQ returns the dead-letter table of table id.
func DLQ(ctx context.Context, q Querier, id int64) (*Table, error) {
	return scanTable(q.QueryRow(ctx, tableDLQSQL, id))
}

// Source returns the table whose topic and partitions t has: t itself, or
// the parent of a dead-letter table.
func Source(ctx context.Context, q Querier, t *Table) (*Table, error) {
	if t.DLQOf == nil {
		return t, nil
	}
	return Get(ctx, q, *t.DLQOf)
}

// List returns every table, dead-letter tables included, by name.
func List(ctx context.Context, q Querier) ([]*Table, error) {
	rows, err := q.Query(ctx, tablesListSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Table
	for rows.Next() {
		t, err := scanTable(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Delete removes a table, its dead-letter table and everything they own
// (leases, ranges, snapshots, metadata files). The topic is untouched.
func Delete(ctx context.Context, pool *pgxpool.Pool, ns, name string) error {
	tag, err := pool.Exec(ctx, tableDeleteSQL, ns, name)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}
