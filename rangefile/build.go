// Package rangefile is the one home of "the data file of an offset range"
// (docs/design.md §4.5): Build encodes a range of a partition read from
// Kafka into its data file (the key names the encoder and schema
// versions), and Builder rebuilds the file of a key on a cache miss and
// checks it against the recorded SHA-256. Indexing, table loads, the
// writer and serving all build through it, so one range always gives one
// key and one content.
package rangefile

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

// Build returns the data file of table t for [start, end) of partition p,
// encoded from the records of src's topic (t's own data file, or its
// dead-letter file when t is a dead-letter table), as a tail file. version
// is src's schema version to encode with, or schemas.Choose (or
// ChooseDecided) to choose it from the records (schemas.Store.Spec); the
// file's key names it. It returns nil
// when the range holds no row of t. Errors wrap outage.ErrUnavailable
// when Kafka, Postgres or the schema registry cannot be reached.
func Build(ctx context.Context, kc *kafka.Client, sch *schemas.Store, t, src *tables.Table, p int32, start, end int64, version int) (*commit.TailFile, error) {
	recs, err := kc.ReadRange(ctx, src.Topic, p, start, end)
	if err != nil {
		return nil, err
	}
	res, version, err := Encode(ctx, sch, src, recs, version)
	if err != nil {
		return nil, fmt.Errorf("rangefile: build %s partition %d [%d, %d): %w", t.FullName(), p, start, end, err)
	}
	f := res.Data
	if t.DLQOf != nil {
		f = res.DLQ
	}
	if f == nil {
		return nil, nil
	}
	key := t.DataFileKeyOf(tables.DataFileRef{Partition: p, Start: start, End: end, Version: datafile.EncoderVersion, Schema: version})
	return &commit.TailFile{Key: key, Partition: p, Start: start, End: end, Schema: version,
		Size: int64(len(f.Bytes)), Records: f.Stats.RecordCount, Stats: f.Stats, File: f}, nil
}

// Encode encodes the records of one range of table t (in offset order, no
// control records) with the spec s.Spec gives for version, and returns the
// files and the schema version used. For a json table whose schema is
// inferred (tables.PropInfer) and version Choose, a build that met fields no
// column holds infers their types from the range's records, adds them to
// the table schema as a new version (docs/design.md §4.7), and builds the
// range again with it. Errors are Spec's, InferNew's and datafile.Build's.
func Encode(ctx context.Context, s *schemas.Store, t *tables.Table, records []*kgo.Record, version int) (*datafile.Result, int, error) {
	spec, err := s.Spec(ctx, t, records, version)
	if err != nil {
		return nil, 0, err
	}
	res, err := datafile.Build(spec, records)
	if err != nil || version != schemas.Choose || !t.Infers() || res.Unknown == 0 {
		return res, spec.Schema.ID, err
	}
	next, err := s.InferNew(ctx, t, records)
	if err != nil || next < 0 {
		return res, spec.Schema.ID, err
	}
	if spec.Schema, err = s.Version(ctx, t.ID, next); err != nil {
		return nil, 0, err
	}
	res, err = datafile.Build(spec, records)
	return res, next, err
}
