package schemas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
)

// Alter evolves the value columns of json table t to take declared, the
// schema a user gives (`mink table alter NS.NAME --schema FILE`, the
// Iceberg schema JSON of `mink table create`; its field ids are
// placeholders and ignored). Under t's row lock it merges declared's
// top-level fields into t's newest schema version with [Evolve] (Iceberg
// spec "Schema Evolution": new fields at any depth, always optional;
// int→long, float→double, wider decimal precision; required→optional) and
// stores the result as the next version (reason "alter"), which every file
// built from then on uses (Spec). A column declared lacks is kept, and
// becomes optional: alter never removes a column or reuses a field id.
// Files built before keep their version and key; `mink table repair`
// rebuilds the ranges whose dead letters the new version decodes.
//
// It returns the new version and true, or the newest version and false
// when it already takes declared as it is (nothing is stored).
//
// Errors wrap tables.ErrInvalid (HTTP 400) for: a table whose value format
// is not json ("the registry defines the schema of avro tables; register a
// new version instead"), a dead-letter table, a declared schema
// [Initial] refuses (no column, a reserved or duplicate name, a type the
// format cannot hold), a column named like the decoded key column, and a
// change Iceberg does not allow — then the [*IncompatibleError]'s text,
// e.g. `field note: table has long, schema has string; Iceberg allows
// only int→long, float→double, wider decimal precision and
// required→optional`. tables.ErrNotFound when t is gone; errors wrapping
// outage.ErrUnavailable when Postgres cannot be reached.
func (s *Store) Alter(ctx context.Context, t *tables.Table, declared *iceberg.Schema) (*iceberg.Schema, bool, error) {
	switch {
	case t.DLQOf != nil:
		return nil, false, fmt.Errorf("%w: %s is a dead-letter table: alter the table it holds the dead letters of", tables.ErrInvalid, t.FullName())
	case t.ValueFormat.Registry():
		return nil, false, fmt.Errorf("%w: the registry defines the schema of %s tables; register a new version instead", tables.ErrInvalid, t.ValueFormat)
	case t.ValueFormat != codec.JSON:
		return nil, false, fmt.Errorf("%w: %s tables have one fixed value column; only json tables take a declared schema", tables.ErrInvalid, t.ValueFormat)
	case declared == nil:
		return nil, false, fmt.Errorf("%w: no schema given", tables.ErrInvalid)
	}
	cols := declared.Fields()
	if codec.KeyColumns(t.KeyFormat) > 0 {
		for _, c := range cols {
			if c.Name == codec.KeyColumnName {
				return nil, false, fmt.Errorf("%w: column %q holds the decoded %s key; the key registry subject defines it",
					tables.ErrInvalid, codec.KeyColumnName, t.KeyFormat)
			}
		}
	}
	// The checks of a create: names, types, what the json decoder takes.
	if _, _, err := Initial(codec.Raw, t.ValueFormat, cols); err != nil {
		return nil, false, fmt.Errorf("%w: schema: %w", tables.ErrInvalid, err)
	}
	opts, err := codec.JSONOptionsOf(t.Properties)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", tables.ErrInvalid, err)
	}
	var out *iceberg.Schema
	changed := false
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var b []byte
		if err := tx.QueryRow(ctx, tableLockSQL, t.ID).Scan(&b); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return tables.ErrNotFound
			}
			return pgstore.Unavailable(err)
		}
		latest := new(iceberg.Schema)
		if err := json.Unmarshal(b, latest); err != nil {
			return fmt.Errorf("schemas: table %s: stored schema: %w", t.FullName(), err)
		}
		next, ch, err := evolveRole(latest, t.KeyFormat, false, cols)
		if err != nil {
			return fmt.Errorf("%w: %w", tables.ErrInvalid, err)
		}
		out, changed = next, ch
		if !ch {
			return nil
		}
		// A schema the decoder cannot match unambiguously (two names equal
		// under case folding with case-insensitive matching) is refused
		// here as at create.
		if _, err := codec.NewDecoder(t.ValueFormat, next, opts); err != nil {
			return fmt.Errorf("%w: schema: %w", tables.ErrInvalid, err)
		}
		return pgstore.Unavailable(tables.AddSchemaVersion(ctx, tx, t.ID, next, "alter"))
	})
	if err != nil {
		if errors.Is(err, tables.ErrInvalid) || errors.Is(err, tables.ErrNotFound) {
			return nil, false, err
		}
		return nil, false, pgstore.Unavailable(err)
	}
	return out, changed, nil
}
