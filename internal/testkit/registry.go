package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/outage"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

// Registry is a schema registry in memory (a schemas.Source) for the
// tests of the store and the jobs that use it; e2e tests use franz-go's
// srfake over HTTP instead. Every schema is a version of Subject, except
// the ids in Foreign (versions of another subject, "other-value"). Down
// makes every call an outage.
type Registry struct {
	mu      sync.Mutex
	Subject string
	byID    map[int]*wire.Schema
	foreign map[int]bool
	down    bool
}

// NewRegistry returns a registry of subject holding schemas (by their ID).
func NewRegistry(subject string, ss ...*wire.Schema) *Registry {
	r := &Registry{Subject: subject, byID: map[int]*wire.Schema{}, foreign: map[int]bool{}}
	for _, s := range ss {
		r.byID[s.ID] = s
	}
	return r
}

// Add registers s; foreign makes it a version of another subject.
func (r *Registry) Add(s *wire.Schema, foreign bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID[s.ID], r.foreign[s.ID] = s, foreign
}

// SetDown makes the registry unreachable (true) or reachable again.
func (r *Registry) SetDown(down bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = down
}

// SchemaByID implements schemas.Source.
func (r *Registry) SchemaByID(_ context.Context, id int) (*wire.Schema, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		return nil, fmt.Errorf("%w: registry down", outage.ErrUnavailable)
	}
	if s, ok := r.byID[id]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("schema id %d: %w", id, schemas.ErrNotFound)
}

// Latest implements schemas.Source: schema id 1.
func (r *Registry) Latest(ctx context.Context, _ string) (*wire.Schema, error) {
	return r.SchemaByID(ctx, 1)
}

// Versions implements schemas.Source: the schemas of Subject (not
// Foreign) by ascending id, version 1 first.
func (r *Registry) Versions(_ context.Context, subject string) ([]schemas.SubjectVersion, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		return nil, fmt.Errorf("%w: registry down", outage.ErrUnavailable)
	}
	var out []schemas.SubjectVersion
	for _, id := range slices.Sorted(maps.Keys(r.byID)) {
		if !r.foreign[id] {
			out = append(out, schemas.SubjectVersion{Version: len(out) + 1, Schema: r.byID[id]})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("subject %q: %w", subject, schemas.ErrNotFound)
	}
	return out, nil
}

// Subjects implements schemas.Source.
func (r *Registry) Subjects(ctx context.Context, id int) ([]string, error) {
	if _, err := r.SchemaByID(ctx, id); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.foreign[id] {
		return []string{"other-value"}, nil
	}
	return []string{r.Subject}, nil
}

// JSONSchema is a registry JSON Schema of an object with properties (the
// text inside "properties") and the required names.
func JSONSchema(id int, properties string, required ...string) *wire.Schema {
	req, _ := json.Marshal(required)
	if required == nil {
		req = []byte("[]")
	}
	return &wire.Schema{ID: id, Type: wire.TypeJSON,
		Text: fmt.Sprintf(`{"type":"object","properties":{%s},"required":%s}`, properties, req)}
}

// RegistryDefinition completes def (a registry format's table, key format
// raw) with the columns of first, and its Avro defaults and aliases, as the
// admin API declares them from the subject version its plan starts from
// (schemas.PlanCreate).
func RegistryDefinition(t testing.TB, def tables.Definition, first *wire.Schema) tables.Definition {
	t.Helper()
	conv, byPath, err := codec.ConvertWriterFields(codec.Format(def.ValueFormat), first, nil)
	if err != nil {
		t.Fatalf("testkit: convert: %v", err)
	}
	sc, _, err := schemas.Initial(codec.Raw, codec.Format(def.ValueFormat), codec.Columns(conv, false))
	if err != nil {
		t.Fatalf("testkit: initial schema: %v", err)
	}
	if def.Schema, err = json.Marshal(iceberg.NewSchema(0, schemas.Columns(sc)...)); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	if fields := schemas.FieldsByID(sc, codec.Raw, false, byPath); len(fields) > 0 {
		if def.Fields, err = json.Marshal(fields); err != nil {
			t.Fatalf("testkit: %v", err)
		}
	}
	return def
}

// CreateTable creates def on partition 0 in pool.
func CreateTable(t testing.TB, pool *pgxpool.Pool, def tables.Definition) *tables.Table {
	t.Helper()
	tbl, err := tables.Create(context.Background(), pool, Warehouse, def, []tables.PartitionStart{{Partition: 0}})
	if err != nil {
		t.Fatalf("testkit: create table: %v", err)
	}
	return tbl
}
