package schemas

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/avro"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/outage"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
)

var (
	//go:embed sql/writer_schema.sql
	writerSchemaSQL string
	//go:embed sql/writer_schema_insert.sql
	writerSchemaInsertSQL string
	//go:embed sql/writer_schemas.sql
	writerSchemasSQL string
	//go:embed sql/registry_schema.sql
	registrySchemaSQL string
	//go:embed sql/registry_schema_insert.sql
	registrySchemaInsertSQL string
	//go:embed sql/table_lock.sql
	tableLockSQL string
	//go:embed sql/newest_version.sql
	newestVersionSQL string
)

// Source is where registry schemas Mink has not stored yet come from: a
// *Registry. Errors wrap ErrNotFound (the registry does not know the id or
// subject) or outage.ErrUnavailable (anything else: retried, never a dead
// letter).
type Source interface {
	SchemaByID(ctx context.Context, id int) (*wire.Schema, error)
	Latest(ctx context.Context, subject string) (*wire.Schema, error)
	// Versions lists every version of subject, oldest first.
	Versions(ctx context.Context, subject string) ([]SubjectVersion, error)
	// Subjects lists the subjects id is a version of.
	Subjects(ctx context.Context, id int) ([]string, error)
}

// Store keeps the schemas of every table (docs/design.md §4.7): registry
// schemas by id, table schema versions, and which version holds the
// records of each writer schema. It caches what it read: all three are
// immutable once stored. Safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	source Source // nil: no registry configured on this node

	log *slog.Logger // SetLog; nil: slog.Default()

	mu       sync.Mutex
	registry map[int]*wire.Schema
	versions map[versionKey]*iceberg.Schema
	fields   map[versionKey]avro.Fields
	writers  map[writerKey]writerMapping
}

type versionKey struct {
	table int64
	id    int
}

type writerKey struct {
	table   int64
	key     bool
	id      int
	indexes string
}

// writerMapping is a table_writer_schemas row: the schema version that
// holds a writer's records, or why they are dead letters (err != "").
type writerMapping struct {
	schemaID int
	err      string
	schema   *wire.Schema
}

// NewStore returns a Store over pool; source may be nil (no registry:
// records of registry formats whose schema id is not stored yet wait).
func NewStore(pool *pgxpool.Pool, source Source) *Store {
	return &Store{pool: pool, source: source, registry: make(map[int]*wire.Schema),
		versions: make(map[versionKey]*iceberg.Schema), fields: make(map[versionKey]avro.Fields), writers: make(map[writerKey]writerMapping)}
}

// Source returns the registry the store fetches from (nil when none).
func (s *Store) Source() Source { return s.source }

// Versions Spec and Build choose themselves.
const (
	// Choose picks the version from the records (see Spec), deciding the
	// writer schemas the table has not met yet.
	Choose = -1
	// ChooseDecided is Choose without deciding anything nor reading
	// Postgres for it: a writer schema this store has not cached makes an
	// UnavailableAt. For builds inside a transaction that holds the
	// table's row lock (a zero-lag load's last attempt), which must not
	// wait for a second connection, nor for the row lock a decision takes.
	ChooseDecided = -2
)

// Newest returns table's newest schema version (an indexer's table may be
// older than an alter or an inferred version another node added).
func (s *Store) Newest(ctx context.Context, table int64) (int, error) {
	var v int
	if err := s.pool.QueryRow(ctx, newestVersionSQL, table).Scan(&v); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, tables.ErrNotFound
		}
		return 0, pgstore.Unavailable(err)
	}
	return v, nil
}

// cached returns the mapping of writer schema k this store holds, or an
// outage error when it holds none (ChooseDecided).
func (s *Store) cached(k writerKey) (writerMapping, error) {
	s.mu.Lock()
	m, ok := s.writers[k]
	s.mu.Unlock()
	if !ok {
		return m, fmt.Errorf("%w: %s schema id %d is not decided yet on this node", outage.ErrUnavailable, role(k.key), k.id)
	}
	return m, nil
}

// Spec returns how the records of one range of table t become rows (t is
// a table, not a dead-letter table): its formats, decoder options, writer
// schemas and the schema version of the data file. With version Choose
// (or ChooseDecided) the version is chosen: for registry formats the
// newest version any record of the range needs (a writer schema the table
// has not seen evolves the table schema first, under its row lock), or
// the table's newest when that one gives a column the needed version
// lacks a default (withDefaults), else t's newest (t.Schema: the caller
// keeps t current, see Newest). With
// version ≥ 0 (a rebuild of a file, whose key names its version) that
// version is used. The same records give the same choice while the table
// gains no version (one giving a default can move it to the newest), so a
// tail file and the indexed file of one range have one key and one
// content; when a version came between them, the writer's replace of the
// tail file by the indexed one takes care of it (docs/design.md §4.6).
//
// Errors wrap outage.ErrUnavailable when Postgres or the registry cannot
// be reached (the caller waits and retries: never a dead letter for an
// outage).
func (s *Store) Spec(ctx context.Context, t *tables.Table, records []*kgo.Record, version int) (*datafile.Spec, error) {
	spec, err := t.Spec()
	if err != nil {
		return nil, err
	}
	if !t.ValueFormat.Registry() && !t.KeyFormat.Registry() {
		if version < 0 {
			version = t.Schema.ID
		}
		if version != t.Schema.ID {
			if spec.Schema, err = s.Version(ctx, t.ID, version); err != nil {
				return nil, err
			}
		}
		return spec, nil
	}
	ws := preparedWriters{}
	need := 0
	// last is the writer of the previous key and value: consecutive
	// records mostly share it, and a header that repeats it byte for byte
	// (schema id, then the message indexes, a prefix-free varint list)
	// needs no parsing or lookup.
	var last [2]struct {
		ok      bool
		id      int
		indexes []byte // the raw message indexes (Protobuf)
	}
	for _, r := range records {
		if r.Attrs.IsControl() {
			continue
		}
		for i, kv := range [2]struct {
			key    bool
			format codec.Format
			b      []byte
		}{{true, t.KeyFormat, r.Key}, {false, t.ValueFormat, r.Value}} {
			if !kv.format.Registry() || kv.b == nil {
				continue
			}
			id, rest, err := wire.Header(kv.b)
			if err != nil {
				continue // a dead letter with that reason
			}
			l := &last[i]
			if l.ok && l.id == id && (kv.format != codec.Protobuf || bytes.HasPrefix(rest, l.indexes)) {
				continue
			}
			var indexes []int
			raw := rest[:0]
			if kv.format == codec.Protobuf {
				var payload []byte
				if indexes, payload, err = wire.MessageIndexes(rest); err != nil {
					continue
				}
				raw = rest[:len(rest)-len(payload)]
			}
			k := writerKey{t.ID, kv.key, id, codec.IndexesString(indexes)}
			if _, ok := ws[k]; ok {
				l.ok, l.id, l.indexes = true, id, raw
				continue
			}
			var m writerMapping
			if version == ChooseDecided {
				m, err = s.cached(k)
			} else {
				m, err = s.writer(ctx, t, k, kv.format, indexes)
			}
			if errors.Is(err, outage.ErrUnavailable) {
				return nil, &UnavailableAt{Partition: r.Partition, Offset: r.Offset, Err: err}
			}
			if err != nil {
				return nil, err
			}
			ws[k] = m
			l.ok, l.id, l.indexes = true, id, raw
			if m.err == "" {
				need = max(need, m.schemaID)
			}
		}
	}
	if version < 0 {
		if version, err = s.withDefaults(ctx, t, need, version); err != nil {
			return nil, err
		}
	}
	if spec.Schema, err = s.Version(ctx, t.ID, version); err != nil {
		return nil, err
	}
	fields, err := s.Fields(ctx, t.ID, version)
	if err != nil {
		return nil, err
	}
	spec.Writers = prepared{ws, fields}
	return spec, nil
}

// withDefaults returns the version a range whose records need version
// need is built with: need, or the table's newest version when the newest
// gives a non-null Avro default to a column that version need lacks. An
// older writer's records then take the default (Avro spec 1.12, "Schema
// Resolution"), as `mink table repair` gives them in files built before
// the default existed; a file of version need would read null there
// (Iceberg format v2 has no initial-default). choose is Choose (the
// newest is read from Postgres) or ChooseDecided (under the row lock: t's
// newest, no query). Errors wrap outage.ErrUnavailable.
func (s *Store) withDefaults(ctx context.Context, t *tables.Table, need, choose int) (int, error) {
	newest := t.Schema.ID
	if choose == Choose {
		n, err := s.Newest(ctx, t.ID)
		if err != nil {
			return 0, err
		}
		newest = max(newest, n)
	}
	if newest <= need {
		return need, nil
	}
	fields, err := s.Fields(ctx, t.ID, newest)
	if err != nil {
		return 0, err
	}
	sc, err := s.Version(ctx, t.ID, need)
	if err != nil {
		return 0, err
	}
	for id, f := range fields {
		if _, ok := sc.FindFieldByID(id); !ok && f.Default != nil {
			return newest, nil
		}
	}
	return need, nil
}

// UnavailableAt is Spec's error when the writer schema of the record at
// Offset of Partition can be neither read from Postgres nor fetched from
// the registry: the records before it can be built (a zero-lag load
// commits them and stops there, docs/design.md §4.7). It wraps the outage.
type UnavailableAt struct {
	Partition int32
	Offset    int64
	Err       error
}

func (e *UnavailableAt) Error() string {
	return fmt.Sprintf("partition %d offset %d: %v", e.Partition, e.Offset, e.Err)
}

func (e *UnavailableAt) Unwrap() error { return e.Err }

// preparedWriters are the writer schemas of one range (codec.WriterSchemas).
type preparedWriters map[writerKey]writerMapping

// prepared are the writer schemas of one range and the fields its
// version keeps (codec.ReaderFields).
type prepared struct {
	preparedWriters
	fields avro.Fields
}

// ReaderFields implements codec.ReaderFields.
func (p prepared) ReaderFields() avro.Fields { return p.fields }

// WriterSchema implements codec.WriterSchemas.
func (p preparedWriters) WriterSchema(key bool, id int, indexes []int) (*wire.Schema, error) {
	for k, m := range p {
		if k.key == key && k.id == id && k.indexes == codec.IndexesString(indexes) {
			if m.err != "" {
				return nil, errors.New(m.err)
			}
			return m.schema, nil
		}
	}
	// Spec saw every record of the range: this is a caller's bug, and a
	// dead letter would be silently wrong, so the build must fail.
	panic(fmt.Sprintf("schemas: writer schema %d was not prepared for this range", id))
}

// Version returns version id of table's schema.
func (s *Store) Version(ctx context.Context, table int64, id int) (*iceberg.Schema, error) {
	k := versionKey{table, id}
	s.mu.Lock()
	sc, ok := s.versions[k]
	s.mu.Unlock()
	if ok {
		return sc, nil
	}
	all, err := tables.SchemaVersions(ctx, s.pool, table, id-1)
	if err != nil {
		return nil, pgstore.Unavailable(err)
	}
	if len(all) == 0 || all[0].ID != id {
		return nil, fmt.Errorf("schemas: table %d has no schema version %d", table, id)
	}
	s.mu.Lock()
	s.versions[k] = all[0]
	s.mu.Unlock()
	return all[0], nil
}

// Versions returns every schema version of table above after (-1: all),
// oldest first.
func (s *Store) Versions(ctx context.Context, table int64, after int) ([]*iceberg.Schema, error) {
	all, err := tables.SchemaVersions(ctx, s.pool, table, after)
	if err != nil {
		return nil, pgstore.Unavailable(err)
	}
	return all, nil
}

func role(key bool) string {
	if key {
		return "key"
	}
	return "value"
}

// writer returns the mapping of one writer schema of table t, deciding it
// when it is not stored yet.
func (s *Store) writer(ctx context.Context, t *tables.Table, k writerKey, format codec.Format, indexes []int) (writerMapping, error) {
	s.mu.Lock()
	m, ok := s.writers[k]
	s.mu.Unlock()
	if ok {
		return m, nil
	}
	m, found, err := s.storedWriter(ctx, s.pool, k)
	if err != nil {
		return m, err
	}
	if !found {
		if m, err = s.decideWriter(ctx, t, k, format, indexes); err != nil {
			return m, err
		}
	}
	if m.err == "" && m.schema == nil {
		if m.schema, err = s.registrySchema(ctx, k.id); err != nil {
			return m, err
		}
	}
	s.mu.Lock()
	s.writers[k] = m
	s.mu.Unlock()
	return m, nil
}

func (s *Store) storedWriter(ctx context.Context, q tables.Querier, k writerKey) (writerMapping, bool, error) {
	var id *int
	var reason *string
	err := q.QueryRow(ctx, writerSchemaSQL, k.table, role(k.key), k.id, k.indexes).Scan(&id, &reason)
	if errors.Is(err, pgx.ErrNoRows) {
		return writerMapping{}, false, nil
	}
	if err != nil {
		return writerMapping{}, false, pgstore.Unavailable(err)
	}
	if reason != nil {
		return writerMapping{err: *reason}, true, nil
	}
	return writerMapping{schemaID: *id}, true, nil
}

// decideWriter decides which version of t's schema holds the records of
// writer schema k: it fetches the schema (registry_schemas, else the
// registry), converts it, and under t's row lock evolves the newest
// version to take it (a new version when something changed), or records
// why it cannot (docs/design.md §4.7).
func (s *Store) decideWriter(ctx context.Context, t *tables.Table, k writerKey, format codec.Format, indexes []int) (writerMapping, error) {
	ws, err := s.registrySchema(ctx, k.id)
	reason := ""
	switch {
	case errors.Is(err, ErrNotFound):
		reason = fmt.Sprintf("%s: schema id %d is not in the schema registry", role(k.key), k.id)
	case errors.Is(err, ErrInvalid):
		reason = fmt.Sprintf("%s: schema id %d: %v", role(k.key), k.id, err)
	case err != nil:
		return writerMapping{}, err
	}
	if reason == "" {
		// Only versions of the table's subject fill it (Confluent's
		// TopicNameStrategy by default): a schema of another subject
		// would reshape the table by accident.
		subject := t.Properties[tables.PropSubject]
		if k.key {
			subject = t.Properties[tables.PropKeySubject]
		}
		if subject != "" {
			if s.source == nil {
				return writerMapping{}, fmt.Errorf("%w: schema id %d is not decided yet and this node has no schema registry (mink serve --schema-registry)",
					outage.ErrUnavailable, k.id)
			}
			subjects, err := s.source.Subjects(ctx, k.id)
			switch {
			case errors.Is(err, ErrNotFound):
				reason = fmt.Sprintf("%s: schema id %d is not in the schema registry", role(k.key), k.id)
			case err != nil:
				return writerMapping{}, err
			case !slices.Contains(subjects, subject):
				reason = fmt.Sprintf("%s: schema id %d is not a version of subject %q (it is a version of %s)",
					role(k.key), k.id, subject, quoteAll(subjects))
			}
		}
	}
	if reason == "" {
		reason = otherMessage(t, k.key, format, ws, indexes)
	}
	var cols []iceberg.NestedField
	var byPath map[string]avro.Field
	if reason == "" {
		cols, byPath, reason = writerColumns(format, ws, k.key, k.id, indexes)
	}
	var m writerMapping
	var added []string // columns the new version gives a default, if any
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var b []byte
		if err := tx.QueryRow(ctx, tableLockSQL, t.ID).Scan(&b); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return tables.ErrNotFound
			}
			return err
		}
		stored, found, err := s.storedWriter(ctx, tx, k)
		if err != nil || found {
			m = stored // decided by another node meanwhile
			return err
		}
		if reason != "" {
			m = writerMapping{err: reason}
		} else {
			latest := new(iceberg.Schema)
			if err := json.Unmarshal(b, latest); err != nil {
				return fmt.Errorf("schemas: table %s: stored schema: %w", t.FullName(), err)
			}
			curFields, err := storedFields(ctx, tx, t.ID, latest.ID)
			if err != nil {
				return err
			}
			var next *iceberg.Schema
			var nf avro.Fields
			next, nf, m = decideColumns(t, latest, curFields, k.key, k.id, format, cols, byPath)
			if next != nil {
				b, err := json.Marshal(nf)
				if err != nil {
					return err
				}
				if err := tables.AddSchemaVersionFields(ctx, tx, t.ID, next, versionReason(k.id, k.key), b); err != nil {
					return err
				}
				added = addedDefaults(latest, next, nf)
			}
		}
		var id *int
		var why *string
		if m.err != "" {
			why = &m.err
		} else {
			id = &m.schemaID
		}
		_, err = tx.Exec(ctx, writerSchemaInsertSQL, t.ID, role(k.key), k.id, k.indexes, id, why)
		return err
	})
	if err != nil {
		if errors.Is(err, tables.ErrNotFound) {
			return m, err
		}
		return m, pgstore.Unavailable(err)
	}
	m.schema = ws
	if len(added) > 0 {
		s.logDefaultGap(ctx, t, m.schemaID, added)
	}
	return m, nil
}

// writerColumns converts writer schema ws (registry id id) into the
// columns its records fill and what it says of them by path (Avro
// defaults and aliases; nil for other formats), or says why its records
// are dead letters (reason != "").
func writerColumns(format codec.Format, ws *wire.Schema, key bool, id int, indexes []int) (cols []iceberg.NestedField, byPath map[string]avro.Field, reason string) {
	wt, bp, err := codec.ConvertWriterFields(format, ws, indexes)
	if err != nil {
		return nil, nil, fmt.Sprintf("%s: schema id %d: %v", role(key), id, err)
	}
	return codec.Columns(wt, key), bp, ""
}

// decideColumns is the decision for a writer schema (registry id id)
// whose records fill cols (byPath: what it says of them, writerColumns),
// against latest, t's newest schema version, whose fields (Avro defaults
// and aliases by field id) are cur: the version that holds its records
// (latest, or next when latest must evolve first: next is then non-nil,
// with id latest.ID+1 and fields nextF), or why they are dead letters. It
// is a pure function: indexing (decideWriter, under the table's row lock)
// and a create's plan (PlanCreate) decide with it.
func decideColumns(t *tables.Table, latest *iceberg.Schema, cur avro.Fields, key bool, id int, format codec.Format,
	cols []iceberg.NestedField, byPath map[string]avro.Field) (next *iceberg.Schema, nextF avro.Fields, m writerMapping) {
	if format == codec.JSONSchema {
		cols = jsonFits(rolePart(latest, t.KeyFormat, key), cols)
	}
	next, changed, err := evolveAliased(latest, t.KeyFormat, key, cols, byPath, cur)
	if err == nil && changed {
		err = decodable(t, next)
	}
	switch {
	case err != nil:
		return nil, nil, writerMapping{err: fmt.Sprintf("%s: schema id %d: %v", role(key), id, err)}
	case changed:
		return next, nextFields(latest, next, cur, FieldsByID(next, t.KeyFormat, key, byPath)), writerMapping{schemaID: next.ID}
	default:
		return nil, nil, writerMapping{schemaID: latest.ID}
	}
}

// versionReason is the reason stored with a schema version a writer
// schema added.
func versionReason(id int, key bool) string {
	return fmt.Sprintf("registry schema %d (%s)", id, role(key))
}

// quoteAll quotes each of ss and joins them with ", " ("none" when empty).
func quoteAll(ss []string) string {
	if len(ss) == 0 {
		return "no subject"
	}
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// rolePart is the part of schema a key (the key column) or a value (the
// value columns) fills.
func rolePart(schema *iceberg.Schema, keyFormat codec.Format, key bool) []iceberg.NestedField {
	fields := schema.Fields()
	nk := codec.KeyColumns(keyFormat)
	if key {
		return fields[1 : 1+nk]
	}
	return fields[1+nk:]
}

// jsonFits returns inc (a JSON Schema's columns) with the type of cur's
// column at the same path where the JSON decoder fills cur's column from
// inc's values exactly or dead-letters the value (docs/design.md §4.2): an
// integer into a double column, a number or a boolean into a string
// column. Such a schema change needs no new version: "integer" where the
// table has "number" is a common JSON Schema refinement.
func jsonFits(cur, inc []iceberg.NestedField) []iceberg.NestedField {
	out := make([]iceberg.NestedField, len(inc))
	for i, f := range inc {
		out[i] = f
		for _, c := range cur {
			if c.Name == f.Name {
				out[i].Type = jsonFitsType(c.Type, f.Type)
				break
			}
		}
	}
	return out
}

func jsonFitsType(c, i iceberg.Type) iceberg.Type {
	switch ct := c.(type) {
	case *iceberg.StructType:
		if it, ok := i.(*iceberg.StructType); ok {
			return &iceberg.StructType{FieldList: jsonFits(ct.FieldList, it.FieldList)}
		}
	case *iceberg.ListType:
		if it, ok := i.(*iceberg.ListType); ok {
			return &iceberg.ListType{ElementID: it.ElementID, Element: jsonFitsType(ct.Element, it.Element), ElementRequired: it.ElementRequired}
		}
	case *iceberg.MapType:
		if it, ok := i.(*iceberg.MapType); ok {
			return &iceberg.MapType{KeyID: it.KeyID, KeyType: it.KeyType, ValueID: it.ValueID,
				ValueType: jsonFitsType(ct.ValueType, it.ValueType), ValueRequired: it.ValueRequired}
		}
	case iceberg.Float64Type:
		if _, ok := i.(iceberg.Int64Type); ok {
			return c
		}
	case iceberg.StringType:
		switch i.(type) {
		case iceberg.Int64Type, iceberg.Float64Type, iceberg.BooleanType:
			return c
		}
	}
	return i
}

// decodable returns the error of t's decoders for schema, a new version
// of t's: what a create and an alter refuse (two names of one struct equal
// under case folding with case-insensitive matching), an evolution must
// refuse too, or every build with that version would fail (found by
// fuzzing inference).
func decodable(t *tables.Table, schema *iceberg.Schema) error {
	opts, err := codec.JSONOptionsOf(t.Properties)
	if err != nil {
		return err
	}
	if _, err := codec.NewDecoderConfig(schema, codec.DecoderConfig{Format: t.ValueFormat, KeyFormat: t.KeyFormat, JSON: opts}); err != nil {
		return err
	}
	if t.KeyFormat.Registry() {
		_, err = codec.NewDecoderConfig(schema, codec.DecoderConfig{Format: t.KeyFormat, KeyFormat: t.KeyFormat, Key: true, JSON: opts})
	}
	return err
}

// evolveRole evolves the part of latest that a key (the key column) or a
// value (the value columns) fills with cols, leaving the other part as it
// is: a key schema never makes a value column optional.
func evolveRole(latest *iceberg.Schema, keyFormat codec.Format, key bool, cols []iceberg.NestedField) (*iceberg.Schema, bool, error) {
	return evolveAliased(latest, keyFormat, key, cols, nil, nil)
}

// evolveAliased is evolveRole after matching the fields Avro aliases name
// as one (renameByAliases): byPath is what the writer says of its fields
// by path, fields what latest keeps by field id. A column renamed by an
// alias makes a new version even when nothing else changed.
func evolveAliased(latest *iceberg.Schema, keyFormat codec.Format, key bool, cols []iceberg.NestedField,
	byPath map[string]avro.Field, fields avro.Fields) (*iceberg.Schema, bool, error) {
	fields0 := latest.Fields()
	nk := codec.KeyColumns(keyFormat)
	part := fields0[1+nk:]
	if key {
		part = fields0[1 : 1+nk]
	}
	renamed := false
	switch {
	case key && len(part) == 1 && len(cols) == 1:
		// The key column: aliases are below it, at Convert's paths.
		ct, it, r := renameType(part[0].Type, cols[0].Type, "", byPath, fields)
		p, c := part[0], cols[0]
		p.Type, c.Type = ct, it
		part, cols, renamed = []iceberg.NestedField{p}, []iceberg.NestedField{c}, r
	case !key:
		part, cols, renamed = renameByAliases(part, cols, "", byPath, fields)
	}
	sub := iceberg.NewSchema(latest.ID, append([]iceberg.NestedField{fields0[0]}, part...)...)
	next, _, changed, err := Evolve(sub, latest.HighestFieldID(), cols)
	if err != nil || (!changed && !renamed) {
		return latest, false, err
	}
	if !changed {
		next = sub // renamed only
	}
	out := []iceberg.NestedField{fields0[0]}
	if key {
		out = append(append(out, Columns(next)...), fields0[1+nk:]...)
	} else {
		out = append(append(out, fields0[1:1+nk]...), Columns(next)...)
	}
	evolved := iceberg.NewSchema(latest.ID+1, out...)
	if err := codec.CheckSchema(evolved); err != nil {
		return latest, false, err
	}
	return evolved, true, nil
}

// registrySchema returns registry schema id: cached, stored, or fetched
// from the registry and stored.
func (s *Store) registrySchema(ctx context.Context, id int) (*wire.Schema, error) {
	s.mu.Lock()
	ws, ok := s.registry[id]
	s.mu.Unlock()
	if ok {
		return ws, nil
	}
	var b []byte
	err := s.pool.QueryRow(ctx, registrySchemaSQL, id).Scan(&b)
	switch {
	case err == nil:
		ws = new(wire.Schema)
		if err := json.Unmarshal(b, ws); err != nil {
			return nil, fmt.Errorf("schemas: stored registry schema %d: %w", id, err)
		}
	case errors.Is(err, pgx.ErrNoRows):
		if s.source == nil {
			return nil, fmt.Errorf("%w: schema id %d is not stored yet and this node has no schema registry (mink serve --schema-registry)",
				outage.ErrUnavailable, id)
		}
		if ws, err = s.source.SchemaByID(ctx, id); err != nil {
			return nil, err
		}
		if ws.ID == 0 {
			ws.ID = id
		}
		if err := s.Put(ctx, ws); err != nil {
			return nil, err
		}
	default:
		return nil, pgstore.Unavailable(err)
	}
	s.mu.Lock()
	s.registry[id] = ws
	s.mu.Unlock()
	return ws, nil
}

// Put stores registry schema ws by its id (a schema a table was created
// from, or one fetched for a record).
func (s *Store) Put(ctx context.Context, ws *wire.Schema) error {
	b, err := json.Marshal(ws)
	if err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, registrySchemaInsertSQL, ws.ID, b); err != nil {
		return pgstore.Unavailable(err)
	}
	return nil
}

// WriterSchemaInfo is one writer schema a table has seen (for its status).
type WriterSchemaInfo struct {
	Role           string `json:"role"`
	RegistryID     int    `json:"registry_id"`
	MessageIndexes string `json:"message_indexes,omitempty"`
	// SchemaID is the table schema version that holds its records; nil
	// when they are dead letters, with Error saying why.
	SchemaID *int   `json:"schema_id,omitempty"`
	Error    string `json:"error,omitempty"`
}

// WriterSchemas lists the writer schemas table has seen, in the order it
// met them.
func WriterSchemas(ctx context.Context, q tables.Querier, table int64) ([]WriterSchemaInfo, error) {
	all, err := WriterSchemasOf(ctx, q, []int64{table})
	if err != nil {
		return nil, err
	}
	if all[table] == nil {
		return []WriterSchemaInfo{}, nil
	}
	return all[table], nil
}

// WriterSchemasOf is WriterSchemas of many tables in one statement, by
// table id; a table that has seen none has no entry.
func WriterSchemasOf(ctx context.Context, q tables.Querier, ids []int64) (map[int64][]WriterSchemaInfo, error) {
	rows, err := q.Query(ctx, writerSchemasSQL, ids)
	if err != nil {
		return nil, err
	}
	type row struct {
		table int64
		info  WriterSchemaInfo
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var w row
		var why *string
		var at any
		err := r.Scan(&w.table, &w.info.Role, &w.info.RegistryID, &w.info.MessageIndexes, &w.info.SchemaID, &why, &at)
		if why != nil {
			w.info.Error = *why
		}
		return w, err
	})
	if err != nil {
		return nil, err
	}
	out := map[int64][]WriterSchemaInfo{}
	for _, w := range all {
		out[w.table] = append(out[w.table], w.info)
	}
	return out, nil
}
