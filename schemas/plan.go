package schemas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/apache/iceberg-go"
	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/avro"
	"github.com/minkhq/mink/codec/protobuf"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/tables"
)

// WriterCounts are the retained records of a topic by the registry id in
// their Confluent wire header, for a create's plan (docs/design.md §4.7).
type WriterCounts struct {
	// Key and Value count the records by the schema id of their key and
	// of their value. Records without a key or value, or without a
	// header, are not counted.
	Key   map[int]int64 `json:"-"`
	Value map[int]int64 `json:"-"`
	// KeyMessages and ValueMessages count a Protobuf key's and value's
	// records by schema id, then by message indexes
	// (codec.IndexesString): a version's records of another message
	// than the table's are dead letters. Nil for other formats.
	KeyMessages   map[int]map[string]int64 `json:"-"`
	ValueMessages map[int]map[string]int64 `json:"-"`
	// Exact: every retained record was read. Otherwise the counts are an
	// estimate scaled from Read records spread over the retained offsets.
	Exact bool `json:"exact"`
	// Read is how many records were read; Retained the number of offsets
	// between the log start and last stable offsets of every partition.
	Read     int64 `json:"records_read"`
	Retained int64 `json:"retained_offsets"`
	// Unframed counts the keys and values without a Confluent wire
	// header, Tombstones the null values: dead letters whatever the plan.
	Unframed   int64 `json:"records_without_header"`
	Tombstones int64 `json:"tombstones"`
}

// PlanRole is what a plan needs of the key or the value of a table whose
// format is a registry one.
type PlanRole struct {
	Format  codec.Format
	Subject string
	// Versions are the subject's versions, oldest first.
	Versions []SubjectVersion
	// Start is the subject version the table's first columns come from;
	// 0 lets the plan choose.
	Start int
	// Message (protobuf) is the one message the table holds, fully
	// qualified; "" is each version's first message. A version without
	// it holds no record the table takes.
	Message string
}

// PlanInput is everything a create's plan depends on.
type PlanInput struct {
	KeyFormat, ValueFormat codec.Format
	// Properties are the table's (the JSON decoder options).
	Properties map[string]string
	// Key and Value are nil when that format is not a registry one.
	Key, Value *PlanRole
	// Columns are the value columns when Value is nil (declared or
	// inferred json).
	Columns []iceberg.NestedField
	Counts  WriterCounts
}

// Plan is how a table created from registry subjects will hold the
// topic's history: its first schema, the schema versions its subjects'
// versions add, and what becomes of the records of each version. The
// create stores every decision (ApplyPlan), so that indexing decides
// exactly as the plan says.
type Plan struct {
	Key   *RolePlan    `json:"key,omitempty"`
	Value *RolePlan    `json:"value,omitempty"`
	Count WriterCounts `json:"counts"`
	// Initial is the table's schema version 0; Added the versions the
	// plan adds (1, 2, …), each with the writer schema that adds it.
	Initial *iceberg.Schema `json:"-"`
	Added   []AddedVersion  `json:"-"`
	// InitialFields are version 0's Avro defaults and aliases by field
	// id (stored with the table, Definition.Fields).
	InitialFields avro.Fields `json:"-"`
}

// AddedVersion is a schema version a writer schema adds.
type AddedVersion struct {
	Schema *iceberg.Schema
	Reason string
	// Fields are the version's Avro defaults and aliases by field id.
	Fields avro.Fields
}

// RolePlan is the plan of one subject.
type RolePlan struct {
	Subject string `json:"subject"`
	// Start is the subject version the first columns come from; Chosen
	// reports whether the plan chose it (no version was given).
	Start  int  `json:"start_version"`
	Chosen bool `json:"chosen"`
	// Steps has one entry per subject version, in version order.
	Steps []PlanStep `json:"versions"`
	// Landing and DeadLetters sum the records of Steps.
	Landing     int64 `json:"records_landing"`
	DeadLetters int64 `json:"records_dead_letters"`
	// Others counts the records whose schema id is no version of Subject:
	// they are dead letters when indexed.
	Others map[int]int64 `json:"other_schema_ids,omitempty"`
}

// PlanStep is what becomes of the records of one subject version.
type PlanStep struct {
	Version    int  `json:"version"`
	RegistryID int  `json:"registry_id"`
	Deleted    bool `json:"deleted,omitempty"`
	// SchemaID is the table schema version that holds its records; nil
	// when they are dead letters, Error saying why.
	SchemaID *int   `json:"schema_id,omitempty"`
	Error    string `json:"error,omitempty"`
	// Records is the number of retained records written with it (an
	// estimate unless the plan's counts are exact); for Protobuf, those
	// of the table's message.
	Records int64 `json:"records"`
	// OtherMessages (Protobuf) is the number of its retained records of
	// another message than the table's: dead letters naming both.
	OtherMessages int64 `json:"records_other_messages,omitempty"`
	// indexes are the message indexes of the role's message in this
	// version (protobuf; codec.IndexesString), the writer key ApplyPlan
	// stores its decision under.
	indexes string
	// stored: ApplyPlan stores the decision (not when the version lacks
	// the role's message: its records are another message's, decided
	// when indexed).
	stored bool
}

// PlanCreate returns the plan of a create (docs/design.md §4.7). A role
// whose Start is 0 takes the start version whose chain lands the most
// retained records: the table starts with that version's columns, then
// every later version, then every earlier one, in version order, is
// decided as indexing decides a writer schema the table has not met (the
// same function: evolve the newest version by the Iceberg spec's "Schema
// Evolution" rules, or dead-letter the records with the reason). Ties go
// to the newer version; without records, the latest version wins. The
// value's start is chosen with the key's given start (else its latest),
// then the key's with the value's.
//
// PlanCreate is a pure function of in. Errors wrap tables.ErrInvalid: a
// subject without versions, a given version the subject lacks or whose
// schema has no Iceberg mapping, no version with one.
func PlanCreate(in PlanInput) (*Plan, error) {
	key, value := in.Key, in.Value
	conv := conversions{}
	var err error
	if value != nil && value.Start == 0 {
		if value, err = choose(in, conv, key, value, false); err != nil {
			return nil, err
		}
	}
	if key != nil && key.Start == 0 {
		if key, err = choose(in, conv, key, value, true); err != nil {
			return nil, err
		}
	}
	p, err := simulate(in, conv, key, value)
	if err != nil {
		return nil, err
	}
	if p.Key != nil {
		p.Key.Chosen = in.Key.Start == 0
	}
	if p.Value != nil {
		p.Value.Chosen = in.Value.Start == 0
	}
	return p, nil
}

// choose returns the role (key or value) with the start version that
// lands the most records, the other role at its start (its latest when
// not chosen yet).
func choose(in PlanInput, conv conversions, key, value *PlanRole, isKey bool) (*PlanRole, error) {
	r := value
	if isKey {
		r = key
	}
	var best *PlanRole
	var bestLanding int64
	var firstErr error
	for _, v := range r.Versions {
		c := *r
		c.Start = v.Version
		k, val := key, value
		if isKey {
			k = &c
			val = withLatest(value)
		} else {
			val = &c
			k = withLatest(key)
		}
		p, err := simulate(in, conv, k, val)
		if err != nil {
			firstErr = cmpErr(firstErr, err)
			continue
		}
		landing := p.Landing(isKey)
		if best == nil || landing >= bestLanding {
			best, bestLanding = &c, landing
		}
	}
	if best == nil {
		if firstErr == nil {
			firstErr = fmt.Errorf("%w: subject %q has no schema in the registry", tables.ErrInvalid, r.Subject)
		}
		return nil, firstErr
	}
	return best, nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// Landing is the records of the key's (isKey) or the value's subject
// versions that land in the table.
func (p *Plan) Landing(isKey bool) int64 {
	if isKey {
		return p.Key.Landing
	}
	return p.Value.Landing
}

// withLatest is r with its latest version as start when it has none.
func withLatest(r *PlanRole) *PlanRole {
	if r == nil || r.Start != 0 || len(r.Versions) == 0 {
		return r
	}
	c := *r
	c.Start = r.Versions[len(r.Versions)-1].Version
	return &c
}

// simulate decides every version of key and value (both with a start)
// for a table created from their start versions.
func simulate(in PlanInput, conv conversions, key, value *PlanRole) (*Plan, error) {
	t := &tables.Table{KeyFormat: in.KeyFormat, ValueFormat: in.ValueFormat, Properties: in.Properties}
	var cols []iceberg.NestedField
	var keyPaths, valuePaths map[string]avro.Field
	for _, r := range []*PlanRole{key, value} {
		if r == nil {
			continue
		}
		sv, err := r.version(r.Start)
		if err != nil {
			return nil, err
		}
		c, bp, _, reason := conv.columns(r, sv.Schema, r == key)
		if reason == "" && r == key && len(c) == 1 {
			if st, ok := c[0].Type.(*iceberg.StructType); ok && len(st.FieldList) == 0 {
				// A struct column needs a field; the key's bytes are in _kafka.key.
				reason = "the key has no fields to decode into a key column: use key format raw (the key's bytes are in _kafka.key)"
			}
		}
		if r == key {
			keyPaths = bp
		} else {
			valuePaths = bp
		}
		if reason != "" {
			return nil, fmt.Errorf("%w: subject %q version %d: %s", tables.ErrInvalid, r.Subject, r.Start, reason)
		}
		cols = append(cols, c...)
	}
	if value == nil {
		cols = append(cols, in.Columns...)
	}
	initial, _, err := Initial(in.KeyFormat, in.ValueFormat, cols)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", tables.ErrInvalid, err)
	}
	fields := FieldsByID(initial, in.KeyFormat, false, valuePaths)
	maps.Copy(fields, FieldsByID(initial, in.KeyFormat, true, keyPaths))
	p := &Plan{Initial: initial, InitialFields: fields, Count: in.Counts}
	latest := initial
	for _, r := range []*PlanRole{key, value} {
		if r == nil {
			continue
		}
		isKey := r == key
		counts, messages := in.Counts.Value, in.Counts.ValueMessages
		if isKey {
			counts, messages = in.Counts.Key, in.Counts.KeyMessages
		}
		rp := &RolePlan{Subject: r.Subject, Start: r.Start}
		decided := map[int]writerMapping{} // by registry id
		ix := map[int]*string{}            // message indexes by registry id
		for _, sv := range r.order() {
			if _, ok := decided[sv.Schema.ID]; ok {
				continue // one schema under two versions is one writer schema
			}
			cols, bp, indexes, reason := conv.columns(r, sv.Schema, isKey)
			m := writerMapping{err: reason}
			ix[sv.Schema.ID] = indexes
			if reason == "" {
				var next *iceberg.Schema
				var nf avro.Fields
				next, nf, m = decideColumns(t, latest, fields, isKey, sv.Schema.ID, r.Format, cols, bp)
				if next != nil {
					p.Added = append(p.Added, AddedVersion{Schema: next, Reason: versionReason(sv.Schema.ID, isKey), Fields: nf})
					latest, fields = next, nf
				}
			}
			decided[sv.Schema.ID] = m
		}
		seen := map[int]bool{}
		for _, sv := range r.Versions {
			m := decided[sv.Schema.ID]
			st := PlanStep{Version: sv.Version, RegistryID: sv.Schema.ID, Deleted: sv.Deleted, Error: m.err}
			if x := ix[sv.Schema.ID]; x != nil {
				st.indexes, st.stored = *x, true
			}
			if m.err == "" {
				id := m.schemaID
				st.SchemaID = &id
			}
			if !seen[st.RegistryID] { // one id under two versions counts once
				st.Records = counts[st.RegistryID]
				if byIndexes, ok := messages[st.RegistryID]; ok && r.Format == codec.Protobuf {
					st.Records = 0
					for indexes, n := range byIndexes {
						if st.stored && indexes == st.indexes {
							st.Records += n
						} else {
							st.OtherMessages += n
						}
					}
				}
				seen[st.RegistryID] = true
			}
			if st.SchemaID != nil {
				rp.Landing += st.Records
			} else {
				rp.DeadLetters += st.Records
			}
			rp.DeadLetters += st.OtherMessages
			rp.Steps = append(rp.Steps, st)
		}
		for id, n := range counts {
			if !seen[id] {
				if rp.Others == nil {
					rp.Others = map[int]int64{}
				}
				rp.Others[id] = n
			}
		}
		if isKey {
			p.Key = rp
		} else {
			p.Value = rp
		}
	}
	return p, nil
}

// conversions caches writerColumns of the versions a plan decides: every
// candidate start decides every version again.
type conversions map[conversion]converted

type conversion struct {
	key bool
	id  int
}

type converted struct {
	cols    []iceberg.NestedField
	byPath  map[string]avro.Field
	indexes *string // nil: the version lacks the role's message
	reason  string
}

// columns is writerColumns of ws (the role's message, or its first), converted
// once, with that message's indexes (nil when ws lacks it).
func (c conversions) columns(pr *PlanRole, ws *wire.Schema, key bool) ([]iceberg.NestedField, map[string]avro.Field, *string, string) {
	k := conversion{key, ws.ID}
	r, ok := c[k]
	if !ok {
		var indexes []int
		var err error
		if pr.Format == codec.Protobuf && pr.Message != "" {
			indexes, err = protobuf.MessageIndexes(ws, pr.Message)
		}
		if err != nil {
			r.reason = fmt.Sprintf("%s: schema id %d: %v", role(key), ws.ID, err)
		} else {
			is := codec.IndexesString(indexes)
			r.indexes = &is
			r.cols, r.byPath, r.reason = writerColumns(pr.Format, ws, key, ws.ID, indexes)
		}
		c[k] = r
	}
	return r.cols, r.byPath, r.indexes, r.reason
}

// version returns version n of the subject.
func (r *PlanRole) version(n int) (SubjectVersion, error) {
	for _, v := range r.Versions {
		if v.Version == n {
			return v, nil
		}
	}
	if len(r.Versions) == 0 {
		return SubjectVersion{}, fmt.Errorf("%w: subject %q has no schema in the registry", tables.ErrInvalid, r.Subject)
	}
	return SubjectVersion{}, fmt.Errorf("%w: subject %q has no version %d (versions %d to %d)",
		tables.ErrInvalid, r.Subject, n, r.Versions[0].Version, r.Versions[len(r.Versions)-1].Version)
}

// order is the order in which the plan decides the versions: the start,
// the later ones, then the earlier ones, each in version order.
func (r *PlanRole) order() []SubjectVersion {
	var later, earlier []SubjectVersion
	var start []SubjectVersion
	for _, v := range r.Versions {
		switch {
		case v.Version == r.Start:
			start = append(start, v)
		case v.Version > r.Start:
			later = append(later, v)
		default:
			earlier = append(earlier, v)
		}
	}
	return append(append(start, later...), earlier...)
}

// Newest is the newest schema version of the plan's table.
func (p *Plan) Newest() *iceberg.Schema {
	if len(p.Added) == 0 {
		return p.Initial
	}
	return p.Added[len(p.Added)-1].Schema
}

// ErrPlanMismatch: the created table's first schema is not the plan's.
var ErrPlanMismatch = errors.New("schemas: the table's first schema is not the plan's")

// ApplyPlan stores p's decisions for table t, just created in tx from
// p.Initial: the schema versions p adds and, for every subject version,
// the table schema version that holds its records or why they are dead
// letters (table_writer_schemas), under the message indexes of the
// table's Protobuf message (other messages' records are dead letters,
// decided when indexed). It sets
// t.Schema to the newest version.
func ApplyPlan(ctx context.Context, tx pgx.Tx, t *tables.Table, p *Plan) error {
	if !t.Schema.Equals(p.Initial) {
		return ErrPlanMismatch
	}
	for _, a := range p.Added {
		b, err := json.Marshal(a.Fields)
		if err != nil {
			return err
		}
		if err := tables.AddSchemaVersionFields(ctx, tx, t.ID, a.Schema, a.Reason, b); err != nil {
			return err
		}
	}
	for _, rp := range []*RolePlan{p.Key, p.Value} {
		if rp == nil {
			continue
		}
		done := map[int]bool{}
		for _, st := range rp.Steps {
			if done[st.RegistryID] || !st.stored {
				continue
			}
			done[st.RegistryID] = true
			var why *string
			if st.SchemaID == nil {
				why = &st.Error
			}
			if _, err := tx.Exec(ctx, writerSchemaInsertSQL, t.ID, role(rp == p.Key), st.RegistryID, st.indexes, st.SchemaID, why); err != nil {
				return err
			}
		}
	}
	t.Schema = p.Newest()
	return nil
}
