package tables

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/minkhq/mink/icebergmeta"
)

// The statements on the tables table and on the rows a table's creation
// stores with it (partitions, leases), one file each under sql/; the
// metadata files' are in metadata_file.go.
var (
	//go:embed sql/location_lock.sql
	locationLockSQL string
	//go:embed sql/location_claim.sql
	locationClaimSQL string
	//go:embed sql/location_overlap.sql
	locationOverlapSQL string
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
	//go:embed sql/schema_version_insert.sql
	schemaVersionInsertSQL string
	//go:embed sql/schema_versions.sql
	schemaVersionsSQL string
	//go:embed sql/schema_version_fields.sql
	schemaVersionFieldsSQL string
)

// Table properties Mink sets from a Definition (docs/design.md §4.1).
const (
	// PropSubject and PropKeySubject: the registry subjects of the value
	// and key schemas (Definition.Subject, KeySubject).
	PropSubject    = "mink.value-subject"
	PropKeySubject = "mink.key-subject"
	// PropMessage and PropKeyMessage: the fully-qualified Protobuf
	// message the value or key column holds (Definition.Message,
	// KeyMessage, filled at create). Tables created before it have none:
	// each writer schema's first message is theirs.
	PropMessage    = "mink.protobuf.value-message"
	PropKeyMessage = "mink.protobuf.key-message"
	// PropInfer is "true" for a json table whose schema is inferred and
	// evolves with new fields (Definition.Infer).
	PropInfer = "mink.json.infer"
)

// PropTargetFileSize is Iceberg's write.target-file-size-bytes: the size in
// bytes below which the writer assembles adjacent data files of a
// partition into one (docs/design.md §4.6, "assembly"). Decimal digits of
// an integer in [1, MaxTargetFileSize]; default DefaultTargetFileSize.
const PropTargetFileSize = "write.target-file-size-bytes"

// MaxTargetFileSize bounds PropTargetFileSize, 64 MiB: a build holds its
// file's records whole in memory, about 790 MB for 8 MiB of flight records
// (DefaultTargetFileSize), so Iceberg's customary 512 MiB would make
// builds no node can hold.
const MaxTargetFileSize = 64 << 20

// DefaultTargetFileSize is PropTargetFileSize's default, 8 MiB. A cold
// read of a file is one build on one node, and a build's time and memory
// follow the file's records, not its bytes: flight records encode about
// 10:1, so an 8 MiB file is 1 million records (88 MiB), a 1.4 to 2 s build
// that allocates about 790 MB, and a 16 MiB one twice that, past the
// default --memory-limit (writer.BenchmarkAssemblyBuild; docs/design.md
// §4.6). Incompressible values build at 150 to 340 MiB/s, and the
// indexer's 16 MiB ranges of them already pass the target. Mink builds
// different files on different owners in parallel, so more files per
// query cost little next to a longer build on one node.
const DefaultTargetFileSize = 8 << 20

// TargetFileSize is t's PropTargetFileSize (validated at create), or
// DefaultTargetFileSize.
func (t *Table) TargetFileSize() int64 {
	if n, err := strconv.ParseInt(t.Properties[PropTargetFileSize], 10, 64); err == nil && n > 0 {
		return n
	}
	return DefaultTargetFileSize
}

// Infers reports whether t's json schema is inferred (PropInfer).
func (t *Table) Infers() bool { return t.Properties[PropInfer] == "true" }

// AddSchemaVersion stores schema (its ID the next version of table id)
// and makes it the table's newest, in tx (which should hold the table's
// row lock). reason says what made it.
func AddSchemaVersion(ctx context.Context, tx pgx.Tx, id int64, schema *iceberg.Schema, reason string) error {
	return AddSchemaVersionFields(ctx, tx, id, schema, reason, nil)
}

// AddSchemaVersionFields is AddSchemaVersion with the version's fields:
// what its registry schemas say of its fields beyond their Iceberg types
// (codec/avro.Fields JSON, by field id; nil: none). They are fixed with
// the version (docs/design.md §4.7).
func AddSchemaVersionFields(ctx context.Context, tx pgx.Tx, id int64, schema *iceberg.Schema, reason string, fields json.RawMessage) error {
	b, err := json.Marshal(schema)
	if err != nil {
		return err
	}
	var f any
	if len(fields) > 0 {
		f = string(fields)
	}
	_, err = tx.Exec(ctx, schemaVersionInsertSQL, id, schema.ID, b, reason, f)
	return err
}

// SchemaVersionFields returns the fields of version version of table id
// (AddSchemaVersionFields; "{}" when none), or ErrNotFound.
func SchemaVersionFields(ctx context.Context, q Querier, id int64, version int) (json.RawMessage, error) {
	var b []byte
	err := q.QueryRow(ctx, schemaVersionFieldsSQL, id, version).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	return b, err
}

// SchemaVersions returns table id's schema versions above after (-1: all),
// oldest first. The schemas are shared and read-only.
func SchemaVersions(ctx context.Context, q Querier, id int64, after int) ([]*iceberg.Schema, error) {
	all, err := SchemaVersionsOf(ctx, q, []int64{id}, after)
	if err != nil {
		return nil, err
	}
	if all[id] == nil {
		return []*iceberg.Schema{}, nil
	}
	return all[id], nil
}

// SchemaVersionsOf is SchemaVersions of many tables in one statement: by
// table id, the schema versions above after (-1: all), oldest first. A
// table without such versions has no entry.
func SchemaVersionsOf(ctx context.Context, q Querier, ids []int64, after int) (map[int64][]*iceberg.Schema, error) {
	rows, err := q.Query(ctx, schemaVersionsSQL, ids, after)
	if err != nil {
		return nil, err
	}
	out := map[int64][]*iceberg.Schema{}
	var id int64
	var b []byte
	_, err = pgx.ForEachRow(rows, []any{&id, &b}, func() error {
		sc, err := parseSchema(b)
		if err != nil {
			return err
		}
		out[id] = append(out[id], sc)
		return nil
	})
	return out, err
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
	return CreateThen(ctx, pool, warehouse, def, starts, nil)
}

// CreateThen is Create that also runs then, when not nil, in the create's
// transaction after the table is stored, before its partitions are: what
// then stores (a registry table's planned schema versions and writer
// schemas, docs/design.md §4.7) is there before any node indexes it. An
// error of then rolls the create back.
func CreateThen(ctx context.Context, pool *pgxpool.Pool, warehouse string, def Definition, starts []PartitionStart,
	then func(ctx context.Context, tx pgx.Tx, t *Table) error) (*Table, error) {
	schema, dlqSchema, err := Schemas(&def)
	if err != nil {
		return nil, err
	}
	if f := codec.Format(def.ValueFormat); f.Registry() {
		def.Properties = withProperty(def.Properties, PropSubject, cmp.Or(def.Subject, def.Topic+"-value"))
	}
	if f := codec.Format(def.KeyFormat); f.Registry() {
		def.Properties = withProperty(def.Properties, PropKeySubject, cmp.Or(def.KeySubject, def.Topic+"-key"))
	}
	if def.Message != "" {
		def.Properties = withProperty(def.Properties, PropMessage, def.Message)
	}
	if def.KeyMessage != "" {
		def.Properties = withProperty(def.Properties, PropKeyMessage, def.KeyMessage)
	}
	if def.Infer {
		def.Properties = withProperty(def.Properties, PropInfer, "true")
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
	dlq, err := insertTable(ctx, tx, warehouse, def, def.Name+DLQSuffix, dlqSchema, &t.ID)
	if err != nil {
		return nil, err
	}
	if err := AddSchemaVersionFields(ctx, tx, t.ID, t.Schema, "create", def.Fields); err != nil {
		return nil, err
	}
	if err := AddSchemaVersion(ctx, tx, dlq.ID, dlq.Schema, "create"); err != nil {
		return nil, err
	}
	if then != nil {
		if err := then(ctx, tx, t); err != nil {
			return nil, err
		}
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

func insertTable(ctx context.Context, tx pgx.Tx, warehouse string, def Definition, name string, schema *iceberg.Schema, dlqOf *int64) (*Table, error) {
	id := uuid.New()
	location, err := claimLocation(ctx, tx, WarehouseLocation(warehouse)+strings.ReplaceAll(def.Namespace, ".", "/")+"/"+name, id)
	if err != nil {
		return nil, err
	}
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
	if err := checkLocation(ctx, tx, location); err != nil {
		return nil, err
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

// claimLocation returns the location of a new table: base
// (s3://<warehouse>/<namespace levels>/<name>) when no table ever had it,
// else base-<id in hex>, when a deleted table had it. A location is never
// given out twice, so a data file key names one table's bytes for good: a
// node's cache serves a cached key without asking PostgreSQL, and must
// never serve a deleted table's file for a new table of the same name
// (docs/design.md §4.1). It takes the location lock first.
func claimLocation(ctx context.Context, tx pgx.Tx, base string, id uuid.UUID) (string, error) {
	if _, err := tx.Exec(ctx, locationLockSQL, locationLock); err != nil {
		return "", err
	}
	for _, loc := range []string{base, base + "-" + hex.EncodeToString(id[:])} {
		tag, err := tx.Exec(ctx, locationClaimSQL, loc)
		if err != nil {
			return "", err
		}
		if tag.RowsAffected() == 1 {
			return loc, nil
		}
	}
	return "", fmt.Errorf("tables: the locations %s and %s-%x were both given out before", base, base, id[:])
}

// locationLock is the advisory lock key that orders table creates for
// claimLocation and checkLocation ("mink.tables.location" hashed once, a
// fixed bigint).
const locationLock int64 = 0x6d696e6b_6c6f6301

// checkLocation refuses, with ErrLocationTaken (409), a location that another
// table's lies below or above: a table x.t1 and a table of namespace x.t1
// (x/t1/ and x/t1/sub/), or x.t1 and x.t1.data (whose location is x.t1's
// data directory). Keys are paths; credentials vended for one table's
// prefix must never cover another's files (docs/design.md §4.1, §5). It
// runs after claimLocation, whose transaction-scoped advisory lock makes
// concurrent creates take turns.
func checkLocation(ctx context.Context, tx pgx.Tx, location string) error {
	var other, otherLoc string
	err := tx.QueryRow(ctx, locationOverlapSQL, location).Scan(&other, &otherLoc)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("%w: the location %s would lie inside or around table %s's (%s): a namespace cannot have the path of a table",
		ErrLocationTaken, location, other, otherLoc)
}

// withProperty returns props (a copy) with k set to v.
func withProperty(props map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(props)+1)
	for pk, pv := range props {
		out[pk] = pv
	}
	out[k] = v
	return out
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
