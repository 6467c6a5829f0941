package tail_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/outage"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/tail"
)

// switchSource is a registry that can be down.
type switchSource struct {
	mu   sync.Mutex
	byID map[int]*wire.Schema
	down bool
}

func (s *switchSource) SchemaByID(_ context.Context, id int) (*wire.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return nil, fmt.Errorf("%w: registry down", outage.ErrUnavailable)
	}
	if w, ok := s.byID[id]; ok {
		return w, nil
	}
	return nil, schemas.ErrNotFound
}

func (s *switchSource) Latest(ctx context.Context, _ string) (*wire.Schema, error) {
	return s.SchemaByID(ctx, 1)
}

func (s *switchSource) Subjects(ctx context.Context, id int) ([]string, error) {
	if _, err := s.SchemaByID(ctx, id); err != nil {
		return nil, err
	}
	return []string{"t-value"}, nil
}

// While the registry is down, a load takes a partition up to its first
// record whose writer schema Mink has not stored, and answers; nothing
// is dead-lettered; the next load after the registry is back takes the rest.
func TestLoadDuringRegistryOutage(t *testing.T) {
	ctx := context.Background()
	v1 := &wire.Schema{ID: 1, Type: wire.TypeJSON, Text: `{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`}
	v2 := &wire.Schema{ID: 2, Type: wire.TypeJSON, Text: `{"type":"object","properties":{"id":{"type":"integer"},"note":{"type":"string"}},"required":["id"]}`}
	src := &switchSource{byID: map[int]*wire.Schema{1: v1, 2: v2}}
	conv, err := codec.ConvertWriter(codec.JSONSchema, v1, nil)
	require.NoError(t, err)
	sc, _, err := schemas.Initial(codec.Raw, codec.JSONSchema, codec.Columns(conv, false))
	require.NoError(t, err)
	declared, err := json.Marshal(iceberg.NewSchema(0, schemas.Columns(sc)...))
	require.NoError(t, err)
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "n", Name: "t", Topic: "t", ValueFormat: "json-schema", Schema: declared})
	l := tail.New(f.Pool, f.Client, tail.Config{Schemas: schemas.NewStore(f.Pool, src)})

	value := func(id int, body string) string { return string(wire.AppendHeader(nil, id, nil)) + body }
	f.ProduceTo(t, 0, value(1, `{"id":1}`), value(1, `{"id":2}`))
	require.EqualValues(t, 2, totalRecords(t, loadTable(t, f, l)))

	// Down: records of the known id 1 go on; the first of id 2 stops the load there.
	src.mu.Lock()
	src.down = true
	src.mu.Unlock()
	f.ProduceTo(t, 0, value(1, `{"id":3}`), value(2, `{"id":4,"note":"n"}`), value(1, `{"id":5}`))
	md := loadTable(t, f, l)
	require.EqualValues(t, 3, totalRecords(t, md))
	var dead int64
	require.NoError(t, f.Pool.QueryRow(ctx, `SELECT count(*) FROM tail_files tf JOIN tables t ON t.id = tf.table_id WHERE t.dlq_of IS NOT NULL`).Scan(&dead))
	require.Zero(t, dead)

	// Back: the rest, under the evolved schema.
	src.mu.Lock()
	src.down = false
	src.mu.Unlock()
	md = loadTable(t, f, l)
	require.EqualValues(t, 5, totalRecords(t, md))
	require.Equal(t, 1, md.CurrentSchema().ID)
	_, ok := md.CurrentSchema().FindFieldByName("note")
	require.True(t, ok)
}

func totalRecords(t *testing.T, md table.Metadata) int64 {
	t.Helper()
	s := md.CurrentSnapshot()
	require.NotNil(t, s)
	n, err := strconv.ParseInt(s.Summary.Properties["total-records"], 10, 64)
	require.NoError(t, err)
	return n
}
