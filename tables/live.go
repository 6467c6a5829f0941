package tables

import (
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/singleflight"
)

var (
	//go:embed sql/locations_live.sql
	locationsLiveSQL string
	//go:embed sql/location_live.sql
	locationLiveSQL string
)

// LocationsTTL is how long a node trusts what it read of the live table
// locations (Locations): a table's files are served by no node once its
// delete has committed and LocationsTTL has passed, so the admin API's
// DELETE answers only then (docs/design.md §5, Security). It is
// auth.CacheTTL's bound, for the same reason: access ends within it.
const LocationsTTL = time.Second

// Locations is one node's view of the live table locations: the S3 API
// serves a key only below one of them, so a deleted table's files, cached
// or not, stop being served everywhere within LocationsTTL of its delete.
// A location is never given out twice (table_locations), so one seen gone
// stays gone: Locations remembers it and never asks again. It is safe for
// concurrent use.
type Locations struct {
	pool      *pgxpool.Pool
	warehouse string // "s3://<warehouse>/"
	log       *slog.Logger
	// Gone, when set, is called once with the key of each location seen
	// deleted (to drop cached copies of its files).
	Gone func(key string)
	now  func() time.Time

	view    atomic.Pointer[locationView]
	reads   singleflight.Group
	deadMu  sync.RWMutex
	dead    map[string]struct{} // keys of locations seen deleted
	storeMu sync.Mutex          // orders the views stored and the Gone calls
	// confirmed holds the keys found live by a read of one location
	// (locationLiveSQL) since the last view, with when that read ended:
	// the next view that was read after it and lacks the key saw it
	// deleted.
	confirmed map[string]time.Time
}

// locationView is the keys (Key of each location) read at one time.
type locationView struct {
	live map[string]struct{}
	read time.Time // when the read was sent, before its snapshot was taken
}

// NewLocations returns the view of the tables of warehouse (tables at
// s3://<warehouse>/…), empty until its first read.
func NewLocations(pool *pgxpool.Pool, warehouse string, log *slog.Logger) *Locations {
	if log == nil {
		log = slog.Default()
	}
	return &Locations{pool: pool, warehouse: WarehouseLocation(warehouse), log: log, now: time.Now, dead: map[string]struct{}{}, confirmed: map[string]time.Time{}}
}

// Run refreshes the view every LocationsTTL/2 until ctx ends, so that a
// read rarely finds it stale; a failed refresh is retried at the next tick.
func (l *Locations) Run(ctx context.Context) {
	t := time.NewTicker(LocationsTTL / 2)
	defer t.Stop()
	for {
		if err := l.Refresh(ctx); err != nil && ctx.Err() == nil {
			l.log.Debug("cannot refresh the live table locations", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Refresh reads every live location. A location the previous view held
// and this one does not is remembered as deleted (and Gone called).
// Errors are PostgreSQL's.
func (l *Locations) Refresh(ctx context.Context) error {
	_, err, _ := l.reads.Do("", func() (any, error) { return nil, l.refresh(ctx) })
	return err
}

func (l *Locations) refresh(ctx context.Context) error {
	read := l.now()
	rows, err := l.pool.Query(ctx, locationsLiveSQL)
	if err != nil {
		return fmt.Errorf("tables: read live locations: %w", err)
	}
	live := map[string]struct{}{}
	for rows.Next() {
		var loc string
		if err := rows.Scan(&loc); err != nil {
			rows.Close()
			return fmt.Errorf("tables: read live locations: %w", err)
		}
		live[Key(loc)] = struct{}{}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("tables: read live locations: %w", err)
	}
	l.storeMu.Lock()
	defer l.storeMu.Unlock()
	var gone []string
	if old := l.view.Load(); old != nil {
		for k := range old.live {
			if _, ok := live[k]; !ok {
				gone = append(gone, k)
			}
		}
	}
	for k, done := range l.confirmed {
		// A read that ended before this one was sent saw an earlier state.
		if done.Before(read) {
			delete(l.confirmed, k)
			if _, ok := live[k]; !ok && !slices.Contains(gone, k) {
				gone = append(gone, k)
			}
		}
	}
	if len(gone) > 0 {
		l.deadMu.Lock()
		for _, k := range gone {
			l.dead[k] = struct{}{}
		}
		l.deadMu.Unlock()
	}
	l.view.Store(&locationView{live: live, read: read})
	for _, k := range gone {
		l.log.Info("table location deleted: its files are no longer served", "location", l.warehouse+k)
		if l.Gone != nil {
			l.Gone(k)
		}
	}
	return nil
}

// Live reports whether key (a table location's key below the warehouse,
// "<ns levels>/<name>") is a live table's. A fresh view (read less than
// LocationsTTL ago) answers from memory when it holds key; a key it does
// not hold (a table created since) is asked of PostgreSQL. A stale view is
// read again first. A key seen deleted is answered false without a read.
// Errors are PostgreSQL's; then stale is the last view's answer, for a
// caller that serves by it while PostgreSQL is unreachable.
func (l *Locations) Live(ctx context.Context, key string) (live bool, stale bool, err error) {
	if l.LiveNow(key) {
		return true, false, nil
	}
	v := l.view.Load()
	if l.isDead(key) {
		return false, false, nil
	}
	if v == nil || l.now().Sub(v.read) >= LocationsTTL {
		if err := l.Refresh(ctx); err != nil {
			last := false
			if v != nil {
				_, last = v.live[key]
			}
			return false, last, err
		}
		v = l.view.Load()
		if _, ok := v.live[key]; ok {
			return true, false, nil
		}
		return false, false, nil
	}
	// Fresh, and key is not in it: a table created since the read, or no
	// table. Only the former can be served.
	var ok bool
	if err := l.pool.QueryRow(ctx, locationLiveSQL, l.warehouse+key).Scan(&ok); err != nil {
		return false, false, fmt.Errorf("tables: read location %s: %w", key, err)
	}
	if ok {
		l.storeMu.Lock()
		l.confirmed[key] = l.now()
		l.storeMu.Unlock()
	}
	return ok, false, nil
}

// LiveNow reports whether a fresh view holds key: Live's answer from
// memory, without a context or a read. False means Live must be asked.
func (l *Locations) LiveNow(key string) bool {
	v := l.view.Load()
	if v == nil || l.now().Sub(v.read) >= LocationsTTL {
		return false
	}
	_, ok := v.live[key]
	return ok
}

func (l *Locations) isDead(key string) bool {
	l.deadMu.RLock()
	defer l.deadMu.RUnlock()
	_, ok := l.dead[key]
	return ok
}
