package schemas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/infer"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
)

// InferNew infers the fields of records' values that t's newest schema
// lacks and adds them as a new version. It returns that version, the
// newest one when another node added them first, or -1 when the records
// name no new field that inference can type. Records are inferred
// together; when their kinds conflict (a field an object in one record
// and a string in another), each record is inferred alone and the new
// fields of those that fit are added, so one odd record (a dead letter
// anyway) does not keep the others' new fields out.
func (s *Store) InferNew(ctx context.Context, t *tables.Table, records []*kgo.Record) (int, error) {
	candidates := inferCandidates(records)
	if len(candidates) == 0 {
		return -1, nil
	}
	opts, err := codec.JSONOptionsOf(t.Properties)
	if err != nil {
		return -1, err
	}
	fold := opts.FieldMatching == codec.MatchCaseInsensitive
	version := -1
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var b []byte
		if err := tx.QueryRow(ctx, tableLockSQL, t.ID).Scan(&b); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return tables.ErrNotFound
			}
			return err
		}
		latest := new(iceberg.Schema)
		if err := json.Unmarshal(b, latest); err != nil {
			return fmt.Errorf("schemas: table %s: stored schema: %w", t.FullName(), err)
		}
		cur := latest
		for _, c := range candidates {
			added := onlyNew(Columns(cur), c, fold)
			if len(added) == 0 {
				continue
			}
			next, changed, err := evolveRole(cur, t.KeyFormat, false, added)
			if err != nil {
				var inc *IncompatibleError
				if errors.As(err, &inc) || errors.Is(err, codec.ErrSchemaTooLarge) || errors.Is(err, codec.ErrSchemaText) ||
					errors.Is(err, ErrInvalidField) {
					continue // this record's shape does not fit: its fields stay out
				}
				return err
			}
			if changed && decodable(t, next) != nil {
				continue // e.g. "b" and "B" with case-insensitive matching: their fields stay out
			}
			if changed {
				cur = next
			}
		}
		if cur == latest {
			version = latest.ID // nothing new: the newest already has them
			return nil
		}
		next := iceberg.NewSchemaWithIdentifiers(latest.ID+1, cur.IdentifierFieldIDs, cur.Fields()...)
		version = next.ID
		return tables.AddSchemaVersion(ctx, tx, t.ID, next, "inferred")
	})
	if err != nil && !errors.Is(err, tables.ErrNotFound) {
		return -1, pgstore.Unavailable(err)
	}
	return version, err
}

// inferCandidates returns the inferred columns of records: one set for all
// of them, or, when their kinds conflict, one set per record that infers
// alone (records that are not JSON objects are left out: dead letters).
func inferCandidates(records []*kgo.Record) [][]iceberg.NestedField {
	var all infer.Inferrer
	for _, r := range records {
		if r.Value != nil {
			_ = all.Add(r.Value)
		}
	}
	if st, err := all.Struct(); err == nil {
		return [][]iceberg.NestedField{st.FieldList}
	}
	var out [][]iceberg.NestedField
	for _, r := range records {
		if r.Value == nil {
			continue
		}
		var one infer.Inferrer
		if one.Add(r.Value) != nil {
			continue
		}
		if st, err := one.Struct(); err == nil {
			out = append(out, st.FieldList)
		}
	}
	return out
}

// onlyNew returns the fields of inc (inferred, all optional) that cur
// lacks, at any depth: a struct both have keeps only its new fields (and
// is left out when it has none; so are the fields of both whose inferred
// type differs, which the json decoder converts or dead-letters as for
// any declared schema). With fold (case-insensitive field matching) a
// field matches the one of cur whose name equals its own under case
// folding, as the json decoder matches them, and takes cur's spelling.
func onlyNew(cur, inc []iceberg.NestedField, fold bool) []iceberg.NestedField {
	var out []iceberg.NestedField
	for _, f := range inc {
		var c *iceberg.NestedField
		for i := range cur {
			if cur[i].Name == f.Name || fold && strings.EqualFold(cur[i].Name, f.Name) {
				c = &cur[i]
				break
			}
		}
		if c == nil {
			out = append(out, f)
			continue
		}
		if t := onlyNewType(c.Type, f.Type, fold); t != nil {
			g := f
			g.Name, g.Type, g.Required = c.Name, t, false
			out = append(out, g)
		}
	}
	return out
}

// onlyNewType is onlyNew inside a field both have: nil when nothing new.
func onlyNewType(c, i iceberg.Type, fold bool) iceberg.Type {
	switch ct := c.(type) {
	case *iceberg.StructType:
		it, ok := i.(*iceberg.StructType)
		if !ok {
			return nil
		}
		if fs := onlyNew(ct.FieldList, it.FieldList, fold); len(fs) > 0 {
			return &iceberg.StructType{FieldList: fs}
		}
	case *iceberg.ListType:
		it, ok := i.(*iceberg.ListType)
		if !ok {
			return nil
		}
		if e := onlyNewType(ct.Element, it.Element, fold); e != nil {
			return &iceberg.ListType{ElementID: it.ElementID, Element: e, ElementRequired: ct.ElementRequired}
		}
	case *iceberg.MapType:
		it, ok := i.(*iceberg.MapType)
		if !ok {
			return nil
		}
		if v := onlyNewType(ct.ValueType, it.ValueType, fold); v != nil {
			return &iceberg.MapType{KeyID: it.KeyID, KeyType: ct.KeyType, ValueID: it.ValueID, ValueType: v, ValueRequired: ct.ValueRequired}
		}
	}
	return nil
}
