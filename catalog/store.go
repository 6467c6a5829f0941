package catalog

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/minkhq/mink/outage"
	"github.com/minkhq/mink/pgstore"
)

// The catalog's read queries. Namespaces are passed with their levels
// joined by ".", as the tables table stores them.
var (
	//go:embed sql/namespace_exists.sql
	namespaceExistsSQL string
	//go:embed sql/list_namespaces.sql
	listNamespacesSQL string
	//go:embed sql/list_tables.sql
	listTablesSQL string
	//go:embed sql/table_exists.sql
	tableExistsSQL string
	//go:embed sql/load_table.sql
	loadTableSQL string
	//go:embed sql/tables_below.sql
	tablesBelowSQL string
)

// store runs the catalog's queries, each request within QueryTimeout.
type store struct {
	pool    *pgxpool.Pool
	timeout time.Duration
	// prefix is the warehouse's location prefix, "s3://<warehouse>/".
	prefix string
}

// conn runs fn on one pooled connection, within the query timeout. Failing
// to get a connection means Postgres cannot be reached (or the node is
// stopping and closed its pool): either way the engine should retry, so the
// error wraps outage.ErrUnavailable unless the request itself was
// cancelled; so do fn's errors that mean Postgres stopped answering
// (pgstore.Unavailable).
func (s *store) conn(ctx context.Context, fn func(context.Context, *pgxpool.Conn) error) error {
	qctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	c, err := s.pool.Acquire(qctx)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("catalog: %w: acquire a Postgres connection: %w", outage.ErrUnavailable, err)
	}
	defer c.Release()
	return pgstore.Unavailable(fn(qctx, c))
}

func (s *store) namespaceExists(ctx context.Context, ns []string) (bool, error) {
	var ok bool
	err := s.conn(ctx, func(ctx context.Context, c *pgxpool.Conn) error {
		return c.QueryRow(ctx, namespaceExistsSQL, joinLevels(ns)).Scan(&ok)
	})
	return ok, err
}

// requireNamespace returns nil when namespace ns exists, else
// noSuchNamespace(ns) or the error of asking.
func (s *store) requireNamespace(ctx context.Context, ns []string) error {
	ok, err := s.namespaceExists(ctx, ns)
	if err == nil && !ok {
		err = noSuchNamespace(ns)
	}
	return err
}

// listNamespaces returns the last levels of the namespaces just below
// parent, after the level after, at most limit of them (0 for all).
func (s *store) listNamespaces(ctx context.Context, parent []string, after string, limit int) ([]string, error) {
	return s.names(ctx, listNamespacesSQL, joinLevels(parent), after, limit)
}

// listTables returns the names of the tables in ns after the name after, at
// most limit of them (0 for all).
func (s *store) listTables(ctx context.Context, ns []string, after string, limit int) ([]string, error) {
	return s.names(ctx, listTablesSQL, joinLevels(ns), after, limit)
}

func (s *store) names(ctx context.Context, sql, ns, after string, limit int) ([]string, error) {
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	var out []string
	err := s.conn(ctx, func(ctx context.Context, c *pgxpool.Conn) error {
		rows, err := c.Query(ctx, sql, ns, after, lim)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return out, err
}

func (s *store) tableExists(ctx context.Context, ns []string, name string) (bool, error) {
	var ok bool
	err := s.conn(ctx, func(ctx context.Context, c *pgxpool.Conn) error {
		return c.QueryRow(ctx, tableExistsSQL, joinLevels(ns), name).Scan(&ok)
	})
	return ok, err
}

// tableRow is a table's namespace (levels joined by '.') and name.
type tableRow struct{ namespace, name string }

// tablesBelow returns every table of namespace ns and of the namespaces
// below it; every table for nil.
func (s *store) tablesBelow(ctx context.Context, ns []string) ([]tableRow, error) {
	var out []tableRow
	err := s.conn(ctx, func(ctx context.Context, c *pgxpool.Conn) error {
		rows, err := c.Query(ctx, tablesBelowSQL, joinLevels(ns))
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (tableRow, error) {
			var t tableRow
			err := r.Scan(&t.namespace, &t.name)
			return t, err
		})
		return err
	})
	return out, err
}

// errNoTable is returned by loadTable for a table that does not exist.
var errNoTable = errors.New("no such table")

// loadTable returns a table's committed metadata location and JSON, and
// its and its dead-letter table's locations.
func (s *store) loadTable(ctx context.Context, ns []string, name string) (Table, error) {
	t := Table{Namespace: ns, Name: name}
	var content []byte
	var dlqLocation *string
	err := s.conn(ctx, func(ctx context.Context, c *pgxpool.Conn) error {
		return c.QueryRow(ctx, loadTableSQL, joinLevels(ns), name, s.prefix).
			Scan(&t.ID, &t.MetadataLocation, &content, &t.Location, &dlqLocation)
	})
	if dlqLocation != nil {
		t.DLQLocation = *dlqLocation
	}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return t, errNoTable
	case err != nil:
		return t, err
	case content == nil:
		if !strings.HasPrefix(t.MetadataLocation, s.prefix) {
			return t, fmt.Errorf("metadata location %s is outside the warehouse %s", t.MetadataLocation, s.prefix)
		}
		return t, fmt.Errorf("metadata file %s is not stored", t.MetadataLocation)
	}
	t.Metadata = content
	return t, nil
}

// joinLevels joins a namespace's levels with ".", the form the tables table
// stores (no level contains a ".").
func joinLevels(ns []string) string { return strings.Join(ns, ".") }
