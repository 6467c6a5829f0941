package schemas

import (
	"context"
	"log/slog"
	"slices"

	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/codec/avro"
	"github.com/minkhq/mink/tables"
)

// SetLog sets the logger of s (nil: slog.Default()). Call it before s is
// used.
func (s *Store) SetLog(log *slog.Logger) { s.log = log }

func (s *Store) logger() *slog.Logger {
	if s.log == nil {
		return slog.Default()
	}
	return s.log
}

// addedDefaults returns the names of the columns that version next,
// evolved from latest, adds with a non-null default (fields, by id), in
// field id order.
func addedDefaults(latest, next *iceberg.Schema, fields avro.Fields) []string {
	high := latest.HighestFieldID()
	var ids []int
	for id, f := range fields {
		if id > high && f.Default != nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	names := make([]string, 0, len(ids))
	for _, id := range ids {
		if n, ok := next.FindColumnName(id); ok {
			names = append(names, n)
		}
	}
	return names
}

// logDefaultGap logs at Info, once (by the node that added version v of
// t, which adds the columns added with defaults), that t's committed data
// files of older versions read null for those columns until `mink table
// repair` rebuilds them (docs/design.md §4.7, "Alter and repair"). It
// logs nothing when t has no such files; a failed count is logged at
// Warn (the version is stored either way).
func (s *Store) logDefaultGap(ctx context.Context, t *tables.Table, v int, added []string) {
	log := s.logger()
	gaps, err := tables.DefaultGaps(ctx, s.pool, []int64{t.ID})
	if err != nil {
		log.Warn("schemas: counting the ranges that read null for new defaults", "table", t.FullName(), "schema_id", v, "err", err)
		return
	}
	if g := gaps[t.ID]; g.Ranges > 0 {
		log.Info("schemas: a new schema version gives columns a default that older committed data files lack; they read null there until repaired: run mink table repair "+t.FullName(),
			"table", t.FullName(), "schema_id", v, "columns", added, "ranges", g.Ranges)
	}
}
