package admin

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

// The overview and a table's status cost a fixed number of Postgres
// statements whatever the number of tables (17 for the overview, in one
// database snapshot: each part of a status is one statement over every
// table), then one ListOffsets call per topic, kafkaListConcurrency at a
// time. A statement per part per table was 2,400 statements a read at 200
// tables, and an open console reads every 2 s (issue 14: bounded Postgres
// load; TestOverviewStatements).

// kafkaListConcurrency bounds the topics whose offsets an overview asks
// Kafka for at once.
const kafkaListConcurrency = 16

// Overview returns the cluster as `mink status` prints it and the console
// (package ui) shows it: the live nodes with their lease counts, and the
// status of every table but dead-letter tables, by name (table ""), or of
// the table named "<namespace>.<name>" alone. Postgres is read in one
// database snapshot (the nodes, tables and partitions agree with each
// other and with Overview.Time); Kafka's offsets come from this node's
// client, after; a table whose topic Kafka does not answer for has
// KafkaError set. Errors: tables.ErrBadName, tables.ErrNotFound,
// tables.ErrInvalid for a dead-letter table's name, Postgres's.
func (h *Handler) Overview(ctx context.Context, table string) (*Overview, error) {
	var ns, name string
	if table != "" {
		var err error
		if ns, name, err = tables.ParseName(table); err != nil {
			return nil, err
		}
	}
	o := &Overview{}
	err := pgx.BeginTxFunc(ctx, h.pool, snapshotRead, func(tx pgx.Tx) error {
		var ts []*tables.Table
		var dlqs map[int64]int64
		if table == "" {
			all, err := tables.List(ctx, tx)
			if err != nil {
				return err
			}
			ts, dlqs = withoutDLQs(all)
		} else {
			t, err := tables.GetByName(ctx, tx, ns, name)
			if err != nil {
				return err
			}
			if t.DLQOf != nil {
				return fmt.Errorf("%w: %s is a dead-letter table: its table's overview shows its dead letters", tables.ErrInvalid, t.FullName())
			}
			if dlqs, err = readDLQ(ctx, tx, t); err != nil {
				return err
			}
			ts = []*tables.Table{t}
		}
		var err error
		if o.Time, o.Nodes, err = readNodeSummaries(ctx, tx); err != nil {
			return err
		}
		o.Tables, err = readStatuses(ctx, tx, ts, dlqs)
		return err
	})
	if err != nil {
		return nil, err
	}
	h.withKafka(ctx, o.Tables)
	return o, nil
}

// status returns the status of table t (not a dead-letter table): the
// overview's, of t alone.
func (h *Handler) status(ctx context.Context, t *tables.Table) (*TableStatus, error) {
	var sts []*TableStatus
	err := pgx.BeginTxFunc(ctx, h.pool, snapshotRead, func(tx pgx.Tx) error {
		dlqs, err := readDLQ(ctx, tx, t)
		if err != nil {
			return err
		}
		sts, err = readStatuses(ctx, tx, []*tables.Table{t}, dlqs)
		return err
	})
	if err != nil {
		return nil, err
	}
	h.withKafka(ctx, sts)
	return sts[0], nil
}

// withoutDLQs returns the tables of all that are not dead-letter tables,
// in all's order, and for each its dead-letter table's id, by its id.
func withoutDLQs(all []*tables.Table) ([]*tables.Table, map[int64]int64) {
	var ts []*tables.Table
	dlqs := map[int64]int64{}
	for _, t := range all {
		if t.DLQOf == nil {
			ts = append(ts, t)
			if _, ok := dlqs[t.ID]; !ok {
				dlqs[t.ID] = t.ID // until its dead-letter table is met: none counts
			}
		} else {
			dlqs[*t.DLQOf] = t.ID
		}
	}
	return ts, dlqs
}

// readStatuses returns the status of each table of ts (none a dead-letter
// table), in ts's order, as Postgres knows it (Kafka's offsets left at 0):
// one statement for each part of a status, over every table at once.
// dlqs has each table's dead-letter table's id, by table id. q should be a
// snapshotRead transaction.
func readStatuses(ctx context.Context, q tables.Querier, ts []*tables.Table, dlqs map[int64]int64) ([]*TableStatus, error) {
	out := make([]*TableStatus, 0, len(ts))
	if len(ts) == 0 {
		return out, nil
	}
	ids := make([]int64, len(ts))
	only := make(map[int64]int64, len(ts)) // dlqs of ts alone
	for i, t := range ts {
		ids[i], only[t.ID] = t.ID, dlqs[t.ID]
	}
	parts, err := readPartitions(ctx, q, only)
	if err != nil {
		return nil, err
	}
	writers, err := readWriters(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	unknown, err := readUnknownFields(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	dead, err := readDeadLetters(ctx, q, only)
	if err != nil {
		return nil, err
	}
	versions, err := tables.SchemaVersionsOf(ctx, q, ids, -1)
	if err != nil {
		return nil, err
	}
	writerSchemas, err := schemas.WriterSchemasOf(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	files, err := readFiles(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	gaps, err := tables.DefaultGaps(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	commits, err := readLastCommits(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	histories, err := readHistories(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		st := &TableStatus{Table: t.FullName(), Topic: t.Topic, Partitions: parts[t.ID], Writer: writers[t.ID],
			UnknownFields: mergeUnknownFields(unknown[t.ID]), DeadLetters: dead[t.ID], SchemaVersions: len(versions[t.ID]),
			WriterSchemas: writerSchemas[t.ID], Files: files[t.ID], LastCommit: commits[t.ID], DefaultGapRanges: gaps[t.ID].Ranges,
			History: HistoryStatus{Refs: []RefStatus{}}}
		if h := histories[t.ID]; h != nil {
			st.History = *h
		}
		if v := versions[t.ID]; len(v) > 0 {
			st.SchemaID = v[len(v)-1].ID
		}
		out = append(out, st)
	}
	return out, nil
}

// withKafka sets in sts Kafka's offsets of their partitions, asking
// Kafka once per topic, kafkaListConcurrency topics at once. A table
// whose topic Kafka did not answer for gets KafkaError (its offsets
// stay 0).
func (h *Handler) withKafka(ctx context.Context, sts []*TableStatus) {
	type listed struct {
		offs map[int32]kafka.Offsets
		err  error
	}
	byTopic := map[string]*listed{}
	for _, st := range sts {
		byTopic[st.Topic] = &listed{}
	}
	var g errgroup.Group
	g.SetLimit(kafkaListConcurrency)
	for topic, l := range byTopic {
		g.Go(func() error {
			l.offs, l.err = h.kafka.ListOffsets(ctx, topic)
			return nil // each table shows its topic's error
		})
	}
	_ = g.Wait()
	for _, st := range sts {
		l := byTopic[st.Topic]
		withKafkaOffsets(st.Partitions, l.offs)
		st.KafkaError = errorText(l.err)
	}
}
