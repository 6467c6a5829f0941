package writer

import (
	"context"
	_ "embed"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/watch.sql
var watchSQL string

// watch is the node's one look, every commit interval, at the tables whose
// writer lease it holds (docs/design.md §4.6, idle rounds): one query for
// all of them (watch.sql) says which have something to commit, and the
// metadata locations that every commit changes; one Kafka request per
// expiry interval for all their topics gives the log start offsets. A
// table's writer runs a duty only when what it depends on changed since
// it last ran (schedule.gates), so a caught-up table costs no query and no
// Kafka request of its own.
type watch struct {
	w *Writer

	mu      sync.Mutex
	tables  map[int64]*watched
	running bool
	// ctx is the loop's; cancel ends it at once when the last table
	// leaves, so a stopped writer leaves no look running behind it.
	ctx    context.Context
	cancel context.CancelFunc
	// logStarts are the log start offsets by topic; asked when each
	// topic was last asked for (answered or not).
	logStarts map[string]map[int32]int64
	asked     map[string]time.Time
}

// watched is one table's part of the watch.
type watched struct {
	// wake is signalled when the table has something to commit.
	wake chan struct{}
	// state is the last look (nil before the first).
	state *tableState
}

// tableState is what one look saw of a table and its dead-letter table.
type tableState struct {
	// at is when the look started: it says nothing of commits after it.
	at time.Time
	// gone: the table no longer exists.
	gone bool
	// pending: a commit round has work (watch.sql).
	pending bool
	// rebuild: a live data file is marked for re-indexing.
	rebuild bool
	// heads are both metadata locations; snapshots both current
	// snapshot ids.
	heads, snapshots string
	// partitions is how many partitions the table has leases for; kafka
	// how many the topic has (0: not known yet).
	partitions, kafka int
	// logStarts are the topic's log start offsets (nil: not known yet).
	logStarts map[int32]int64
	// tags: the table has consumer-group tags to follow or remove.
	tags bool
}

// add registers table id and starts the watch loop if it is not running.
func (wt *watch) add(id int64) *watched {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if wt.tables == nil {
		wt.tables = map[int64]*watched{}
	}
	e := &watched{wake: make(chan struct{}, 1)}
	wt.tables[id] = e
	if wt.ctx == nil || wt.ctx.Err() != nil {
		wt.ctx, wt.cancel = context.WithCancel(context.Background())
	}
	if !wt.running {
		wt.running = true
		go wt.run()
	}
	return e
}

// remove unregisters e, table id's entry; the loop ends when no table is
// left.
func (wt *watch) remove(id int64, e *watched) {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if wt.tables[id] == e {
		delete(wt.tables, id)
	}
	if len(wt.tables) == 0 && wt.cancel != nil {
		wt.cancel()
	}
}

// state returns e's last look.
func (wt *watch) state(e *watched) *tableState {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	return e.state
}

// run looks every commit interval while tables are registered; it ends
// as soon as the last one leaves (remove cancels the loop's context).
func (wt *watch) run() {
	tick := time.NewTicker(wt.w.cfg.CommitInterval)
	defer tick.Stop()
	for {
		wt.mu.Lock()
		if len(wt.tables) == 0 {
			wt.running = false
			wt.mu.Unlock()
			return
		}
		ids := slices.Collect(maps.Keys(wt.tables))
		ctx := wt.ctx
		wt.mu.Unlock()
		wt.look(ctx, ids)
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
}

// look reads the state of tables ids and wakes those with work. A failed
// read leaves the last states (the writers fall back to plain rounds once
// they are too old, schedule.gates).
func (wt *watch) look(loop context.Context, ids []int64) {
	ctx, cancel := context.WithTimeout(loop, wt.w.cfg.CommitInterval)
	defer cancel()
	at := time.Now()
	rows, err := wt.w.pool.Query(ctx, watchSQL, ids)
	if err != nil {
		wt.w.cfg.Logger.Debug("writer: watch failed", "err", err)
		return
	}
	states := map[int64]*tableState{}
	topicOf := map[int64]string{}
	var id int64
	var topic string
	var s tableState
	if _, err := pgx.ForEachRow(rows, []any{&id, &s.pending, &s.rebuild, &s.heads, &s.snapshots, &topic, &s.partitions, &s.tags}, func() error {
		st := s
		st.at = at
		states[id], topicOf[id] = &st, topic
		return nil
	}); err != nil {
		wt.w.cfg.Logger.Debug("writer: watch failed", "err", err)
		return
	}
	wt.lookKafka(loop, topicOf, at)

	wt.mu.Lock()
	defer wt.mu.Unlock()
	for _, id := range ids {
		e, ok := wt.tables[id]
		if !ok {
			continue
		}
		st, ok := states[id]
		if !ok {
			st = &tableState{at: at, gone: true}
		}
		if starts, ok := wt.logStarts[topicOf[id]]; ok {
			st.logStarts, st.kafka = starts, len(starts)
		}
		e.state = st
		if st.gone || st.pending {
			select {
			case e.wake <- struct{}{}:
			default:
			}
		}
	}
}

// lookKafka reads the log start offsets of the tables' topics that were
// not asked for in the last expiry interval (a topic new to the watch at
// once). It remembers when each topic was asked, not which answered: a
// deleted topic never answers and must not make every look ask again. A
// topic that failed keeps its last offsets and holds up only its tables.
// The Kafka look has a timeout of its own, not what the Postgres look left.
func (wt *watch) lookKafka(loop context.Context, topicOf map[int64]string, at time.Time) {
	wt.mu.Lock()
	if wt.asked == nil {
		wt.asked = map[string]time.Time{}
	}
	var topics []string
	for _, t := range topicOf {
		if asked, ok := wt.asked[t]; (!ok || at.Sub(asked) >= wt.w.expiryInterval()) && !slices.Contains(topics, t) {
			topics = append(topics, t)
		}
	}
	wt.mu.Unlock()
	if len(topics) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(loop, wt.w.cfg.CommitInterval)
	defer cancel()
	starts, errs, err := wt.w.kafka.LogStarts(ctx, topics)
	wt.mu.Lock()
	defer wt.mu.Unlock()
	for _, t := range topics {
		// Asked, even when Kafka failed or was slow: the next look must
		// not ask again at once (an overloaded broker would be asked
		// every commit interval).
		wt.asked[t] = at
	}
	if err != nil {
		wt.w.cfg.Logger.Debug("writer: watch: log start offsets", "err", err)
		return
	}
	for t, err := range errs {
		wt.w.cfg.Logger.Debug("writer: watch: log start offsets", "topic", t, "err", err)
	}
	if wt.logStarts == nil {
		wt.logStarts = map[string]map[int32]int64{}
	}
	for _, t := range topics {
		if s, ok := starts[t]; ok {
			wt.logStarts[t] = s
		} else if errs[t] == nil {
			delete(wt.logStarts, t) // Kafka does not know it
		}
	}
	// Forget topics no table watches any more.
	watched := map[string]bool{}
	for _, t := range topicOf {
		watched[t] = true
	}
	for t := range wt.asked {
		if !watched[t] {
			delete(wt.asked, t)
			delete(wt.logStarts, t)
		}
	}
}

// duty is a writer duty that runs only when what it depends on changed
// (gates).
type duty int

const (
	dutyStats duty = iota
	dutyExpiry
	dutyAssembly
	dutyCheck
	dutyCollect
	dutyTags
	duties
)

// ranOn is the state a duty last ran on, successfully.
type ranOn struct {
	heads     string
	snapshots string
	logStarts map[int32]int64
	at        time.Time
}

// watchStale is how many commit intervals old a look may be before a
// writer stops trusting it and runs its rounds as if everything changed
// (the watch cannot read Postgres, or is late).
const watchStale = 3

// gates says what a round may run (docs/design.md §4.6, idle rounds).
type gates struct {
	// commit: the commit of the table and its dead-letter table.
	commit bool
	// open are the duties whose inputs changed since they last ran and
	// whose interval has passed.
	open [duties]bool
	// heads, snapshots and logStarts are the look's, and now the round's
	// time, recorded by done.
	now              time.Time
	heads, snapshots string
	logStarts        map[int32]int64
}

// none reports whether the round has nothing to run.
func (g gates) none() bool { return !g.commit && g.open == [duties]bool{} }

// gates returns what a round at now may run, given the watch's last look
// st (nil before the first):
//   - the first round, and a round without a look younger than watchStale
//     commit intervals, run everything that is due, as before the watch;
//   - the commit runs when the look saw work (pending) after this writer's
//     last commit started, or the table gone;
//   - statistics, when the current snapshots changed since they last ran;
//     expiry, when the snapshots or the log start offsets changed or a
//     file is marked for re-indexing; assembly, when the snapshots or the
//     log start offsets changed; the partition check, when the topic has
//     more partitions than the table's leases; collection, when the heads
//     (metadata locations) changed, and once more collectAfter after their last change (what
//     the last commit expired is then collectable); the consumer-group
//     tags, when the table has mink.group-tags or tags left;
//   - each only when its interval has passed too.
//
// It records the heads' last change and, for a commit it allows, the
// commit's start.
func (s *schedule) gates(now time.Time, st *tableState) gates {
	if s.ran == nil {
		s.ran = map[duty]ranOn{}
	}
	g := gates{now: now}
	last := [duties]time.Time{s.lastStats, s.lastExpiry, s.lastAssembly, s.lastCheck, s.lastCheck, s.lastTags}
	every := [duties]time.Duration{s.statsInterval, s.expiryInterval, s.expiryInterval, s.checkInterval, s.checkInterval, s.expiryInterval}
	if !s.started || st == nil || now.Sub(st.at) > watchStale*s.commitInterval {
		s.started = true
		g.commit = true
		for d := range duties {
			g.open[d] = now.Sub(last[d]) >= every[d]
		}
		if st != nil {
			g.heads, g.snapshots, g.logStarts = st.heads, st.snapshots, st.logStarts
		}
		s.lastCommit = now
		return g
	}
	g.heads, g.snapshots, g.logStarts = st.heads, st.snapshots, st.logStarts
	if st.heads != s.heads {
		s.heads, s.changed = st.heads, st.at
	}
	g.commit = st.gone || (st.pending && st.at.After(s.lastCommit))
	if g.commit {
		s.lastCommit = now
	}
	changed := func(d duty) bool { return s.ran[d].heads != st.heads }
	// Statistics, expiry and assembly depend on the snapshots, not on a
	// metadata file that only registers statistics.
	committed := func(d duty) bool { return s.ran[d].snapshots != st.snapshots }
	starts := func(d duty) bool { return !maps.Equal(s.ran[d].logStarts, st.logStarts) }
	settled := s.changed.Add(s.collectAfter)
	want := [duties]bool{
		dutyStats:    committed(dutyStats),
		dutyExpiry:   committed(dutyExpiry) || starts(dutyExpiry) || st.rebuild,
		dutyAssembly: committed(dutyAssembly) || starts(dutyAssembly),
		dutyCheck:    st.kafka > st.partitions,
		dutyCollect:  changed(dutyCollect) || (!now.Before(settled) && s.ran[dutyCollect].at.Before(settled)),
		// Group offsets move in Kafka, unseen by the look: a table with
		// tags asks every interval, one without costs nothing.
		dutyTags: st.tags,
	}
	for d := range duties {
		g.open[d] = want[d] && now.Sub(last[d]) >= every[d]
	}
	return g
}

// allows reports whether g lets duty d run.
func (g gates) allows(d duty) bool { return g.open[d] }

// done records that duty d ran on g's state at now, when it succeeded; a
// failed duty stays open, to be tried again when next due.
func (s *schedule) done(d duty, g gates, ok bool) {
	if ok {
		s.ran[d] = ranOn{heads: g.heads, snapshots: g.snapshots, logStarts: g.logStarts, at: g.now}
	}
}
