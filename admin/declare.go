package admin

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/infer"
	"github.com/minkhq/mink/codec/protobuf"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

// InferRecords is how many of the newest records of each partition a
// table created with Infer reads to infer its schema (docs/design.md
// §4.7); fields that appear later evolve the schema as they are indexed.
const InferRecords = 10000

// declare fills def.Schema where the columns do not come from the user:
// for registry formats from the latest schemas of the subjects (the
// decoded key column first), for json with Infer from the records Kafka
// retains. Errors wrap tables.ErrInvalid (a 400: no registry configured,
// a subject the registry does not know, a schema with no Iceberg mapping,
// records whose types conflict) or outage.ErrUnavailable.
func (h *Handler) declare(ctx context.Context, def *tables.Definition, offs map[int32]kafka.Offsets) error {
	vf, kf := codec.Format(def.ValueFormat), codec.Format(cmp.Or(def.KeyFormat, string(codec.Raw)))
	if !vf.Registry() && !kf.Registry() && !def.Infer {
		return nil
	}
	declared := len(def.Schema) > 0 && string(def.Schema) != "null"
	var cols []iceberg.NestedField
	if kf.Registry() {
		if vf == codec.Raw || vf == codec.String {
			return fmt.Errorf("%w: an %s key is decoded into a key column, which needs value format json, avro, protobuf or json-schema", tables.ErrInvalid, kf)
		}
		c, err := h.subjectColumns(ctx, kf, cmp.Or(def.KeySubject, def.Topic+"-key"), true, &def.KeyMessage)
		if err != nil {
			return err
		}
		cols = append(cols, c...)
	}
	switch {
	case vf.Registry():
		if declared {
			return fmt.Errorf("%w: the schema registry defines the columns of %s tables: give no schema (choose the subject with --subject)", tables.ErrInvalid, vf)
		}
		c, err := h.subjectColumns(ctx, vf, cmp.Or(def.Subject, def.Topic+"-value"), false, &def.Message)
		if err != nil {
			return err
		}
		cols = append(cols, c...)
	case def.Infer:
		if declared {
			return fmt.Errorf("%w: infer and a schema exclude each other", tables.ErrInvalid)
		}
		st, err := h.infer(ctx, def.Topic, offs)
		if err != nil {
			return err
		}
		cols = append(cols, st.FieldList...)
	case declared:
		var d iceberg.Schema
		if err := json.Unmarshal(def.Schema, &d); err != nil {
			return fmt.Errorf("%w: schema: %w", tables.ErrInvalid, err)
		}
		cols = append(cols, d.Fields()...)
	}
	sc, _, err := schemas.Initial(kf, vf, cols)
	if err != nil {
		return fmt.Errorf("%w: %w", tables.ErrInvalid, err)
	}
	b, err := json.Marshal(iceberg.NewSchema(0, schemas.Columns(sc)...))
	if err != nil {
		return err
	}
	def.Schema = b
	return nil
}

// subjectColumns returns the columns of the latest schema of subject.
// For protobuf, those of the message named *message, or of the schema's
// first message, whose name it then sets in *message: the one message
// type the table holds.
func (h *Handler) subjectColumns(ctx context.Context, f codec.Format, subject string, key bool, message *string) ([]iceberg.NestedField, error) {
	src := h.cfg.Schemas.Source()
	if src == nil {
		return nil, fmt.Errorf("%w: format %s needs a schema registry: start the nodes with --schema-registry URL", tables.ErrInvalid, f)
	}
	ws, err := src.Latest(ctx, subject)
	if errors.Is(err, schemas.ErrNotFound) {
		return nil, fmt.Errorf("%w: subject %q has no schema in the registry", tables.ErrInvalid, subject)
	}
	if errors.Is(err, schemas.ErrInvalid) {
		return nil, fmt.Errorf("%w: subject %q: %w", tables.ErrInvalid, subject, err)
	}
	if err != nil {
		return nil, err
	}
	var indexes []int
	if f == codec.Protobuf {
		if *message != "" {
			indexes, err = protobuf.MessageIndexes(ws, *message)
		} else {
			*message, err = protobuf.MessageName(ws, nil)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: subject %q (schema id %d): %w", tables.ErrInvalid, subject, ws.ID, err)
		}
	}
	t, err := codec.ConvertWriter(f, ws, indexes)
	if err != nil {
		return nil, fmt.Errorf("%w: subject %q (schema id %d): %w", tables.ErrInvalid, subject, ws.ID, err)
	}
	if st, ok := t.(*iceberg.StructType); ok && key && len(st.FieldList) == 0 {
		// A struct column needs a field; the key's bytes are in _kafka.key.
		return nil, fmt.Errorf("%w: subject %q (schema id %d): the key has no fields to decode into a key column: use key format raw (the key's bytes are in _kafka.key)",
			tables.ErrInvalid, subject, ws.ID)
	}
	if err := h.cfg.Schemas.Put(ctx, ws); err != nil {
		return nil, err
	}
	return codec.Columns(t, key), nil
}

// infer infers a json schema from the newest InferRecords records of each
// partition of topic. Records inference refuses (not a JSON object, or
// nested deeper than infer.MaxDepth) are skipped: they are dead letters
// once indexed. When no schema results, the error says how many were
// skipped and why the first one was.
func (h *Handler) infer(ctx context.Context, topic string, offs map[int32]kafka.Offsets) (*iceberg.StructType, error) {
	var inf infer.Inferrer
	skipped := 0
	var first error
	for p, o := range offs {
		start := max(o.LogStart, o.LastStable-InferRecords)
		recs, err := h.kafka.ReadRange(ctx, topic, p, start, o.LastStable)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if r.Value == nil {
				continue
			}
			if err := inf.Add(r.Value); err != nil {
				skipped++
				if first == nil {
					first = fmt.Errorf("partition %d offset %d: %w", r.Partition, r.Offset, err)
				}
			}
		}
	}
	st, err := inf.Struct()
	if err != nil && skipped > 0 {
		return nil, fmt.Errorf("%w: infer the schema of topic %s: %w (%d records skipped; the first, %w)",
			tables.ErrInvalid, topic, err, skipped, first)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: infer the schema of topic %s: %w", tables.ErrInvalid, topic, err)
	}
	return st, nil
}
