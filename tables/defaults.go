package tables

import (
	"context"
	_ "embed"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/default_gaps.sql
var defaultGapsSQL string

// DefaultGap is where a table's committed data files read null for a
// column that a newer schema version gives an Avro default: a file
// encoded with a version that lacks the column has no such column, and
// Iceberg format v2 has no `initial-default` to fill it (docs/design.md
// §4.7, "Alter and repair").
type DefaultGap struct {
	// Versions are the table's schema versions, older than its newest,
	// that lack a column to which the newest gives a non-null default,
	// oldest first.
	Versions []int
	// Ranges is how many live committed data files of the table were
	// encoded with one of Versions: `mink table repair` rebuilds them.
	Ranges int64
}

// DefaultGaps returns the DefaultGap of each table of ids that has one
// (Versions not empty), by table id, in one statement.
func DefaultGaps(ctx context.Context, q Querier, ids []int64) (map[int64]DefaultGap, error) {
	rows, err := q.Query(ctx, defaultGapsSQL, ids)
	if err != nil {
		return nil, err
	}
	out := map[int64]DefaultGap{}
	var id int64
	var g DefaultGap
	_, err = pgx.ForEachRow(rows, []any{&id, &g.Versions, &g.Ranges}, func() error {
		out[id] = DefaultGap{Versions: append([]int(nil), g.Versions...), Ranges: g.Ranges}
		return nil
	})
	return out, err
}
