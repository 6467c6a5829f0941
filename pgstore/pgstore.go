// Package pgstore owns Mink's PostgreSQL connection pool and schema: the
// numbered migrations embedded in the binary and applied at start, and the
// fencing function every lease holder's write passes through (docs/design.md §3.2).
//
// Each domain package keeps its own queries; pgstore only opens, migrates and
// classifies errors (Fenced, Unavailable).
package pgstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jackc/puddle/v2"
	"github.com/minkhq/mink/outage"
	"github.com/pressly/goose/v3"
)

//go:embed migrations/*.sql
var migrations embed.FS

// SQLSTATE codes raised by Mink's own SQL functions.
const (
	// CodeFenced is raised by mink_check_epoch when a write carries a lease
	// epoch that is not the current holding (docs/design.md §3.2).
	CodeFenced = "MINKF"
	// CodeRangeGap is raised when an indexed range does not start where the
	// partition's previous range ended.
	CodeRangeGap = "MINKR"
)

// ErrFenced is returned (wrapped) for a write rejected because its lease
// epoch is not current. The holder must stop the job at once.
var ErrFenced = errors.New("lease epoch is not current")

// Open connects, creates the schema when asked and applies every pending
// migration. The returned pool is ready for use.
func Open(ctx context.Context, cfg Config) (*pgxpool.Pool, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pcfg, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("pgstore: parse postgres url: %w", err)
	}
	pcfg.MaxConns = cfg.MaxConns
	if _, set := pcfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"]; !set {
		ms := max(cfg.IdleInTransactionTimeout.Milliseconds(), 1)
		pcfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.FormatInt(ms, 10)
	}
	if cfg.Schema != "" {
		if err := createSchema(ctx, pcfg.ConnConfig, cfg.Schema); err != nil {
			return nil, err
		}
		pcfg.ConnConfig.RuntimeParams["search_path"] = cfg.Schema
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: connect: %w", err)
	}
	if err := Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

func createSchema(ctx context.Context, cc *pgx.ConnConfig, schema string) error {
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return fmt.Errorf("pgstore: connect: %w", err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize())
	if err != nil {
		return fmt.Errorf("pgstore: create schema %s: %w", schema, err)
	}
	return nil
}

// Migrate applies the embedded migrations that the database has not seen.
// Concurrent starts are serialised by goose's session lock.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	return migrate(ctx, db)
}

func migrate(ctx context.Context, db *sql.DB) error {
	provider, err := goose.NewProvider(goose.DialectPostgres, db, mustSub(migrations, "migrations"),
		goose.WithSessionLocker(mustLocker()))
	if err != nil {
		return fmt.Errorf("pgstore: migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	return nil
}

// IsFenced reports whether err is a write rejected by the fencing check.
func IsFenced(err error) bool {
	if errors.Is(err, ErrFenced) {
		return true
	}
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == CodeFenced
}

// Fenced wraps err in ErrFenced when it is a fencing rejection, else
// returns it as it is. Callers branch with errors.Is(err, ErrFenced).
func Fenced(err error) error {
	if err == nil || errors.Is(err, ErrFenced) {
		return err
	}
	if IsFenced(err) {
		return fmt.Errorf("%w: %w", ErrFenced, err)
	}
	return err
}

// Unavailable marks err with outage.ErrUnavailable when it means
// PostgreSQL could not be reached or did not answer (connection refused,
// reset, timeout, server shutting down, pool closed), as opposed to a query
// the server rejected, and else returns it as it is; the message stays
// err's. Callers branch with errors.Is(err, outage.ErrUnavailable) and
// answer such errors with 503, or retry.
func Unavailable(err error) error {
	if unreachable(err) {
		return outage.Mark(err)
	}
	return err
}

// unreachable reports whether err means PostgreSQL could not be reached or
// did not answer (see Unavailable).
func unreachable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exception; 57P0x: admin/crash shutdown;
		// class 40: the transaction was rolled back for a deadlock or a
		// serialization failure, and the same request can succeed now.
		return len(pgErr.Code) == 5 && (pgErr.Code[:2] == "08" || pgErr.Code[:3] == "57P" || pgErr.Code[:2] == "40")
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	// A closed pool only happens while a node shuts down; another node can
	// answer. A deadline means the server did not answer in time.
	if errors.Is(err, puddle.ErrClosedPool) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	// A pooled connection to a server that went away fails on its first
	// use with a reset or an early EOF rather than a connect error.
	var op *net.OpError
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.As(err, &op) {
		return true
	}
	return pgconn.SafeToRetry(err) || pgconn.Timeout(err) || isConnectError(err)
}

func isConnectError(err error) bool {
	var ce *pgconn.ConnectError
	return errors.As(err, &ce)
}
