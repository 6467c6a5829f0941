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
// for registry formats from the versions of the subjects that the plan
// chooses (the decoded key column first; docs/design.md §4.7), for json
// with Infer from the records Kafka retains. For registry formats it
// returns the plan, which the create stores. Errors wrap tables.ErrInvalid
// (a 400: no registry configured, a subject the registry does not know,
// a version it lacks, a schema with no Iceberg mapping, records whose
// types conflict) or outage.ErrUnavailable.
func (h *Handler) declare(ctx context.Context, def *tables.Definition, offs map[int32]kafka.Offsets) (*schemas.Plan, error) {
	vf, kf := codec.Format(def.ValueFormat), codec.Format(cmp.Or(def.KeyFormat, string(codec.Raw)))
	if !vf.Registry() && !kf.Registry() && !def.Infer {
		return nil, nil
	}
	declared := len(def.Schema) > 0 && string(def.Schema) != "null"
	in := schemas.PlanInput{KeyFormat: kf, ValueFormat: vf, Properties: def.Properties}
	var err error
	if kf.Registry() {
		if vf == codec.Raw || vf == codec.String {
			return nil, fmt.Errorf("%w: an %s key is decoded into a key column, which needs value format json, avro, protobuf or json-schema", tables.ErrInvalid, kf)
		}
		if in.Key, err = h.subjectRole(ctx, kf, cmp.Or(def.KeySubject, def.Topic+"-key"), def.KeySubjectVersion, &def.KeyMessage); err != nil {
			return nil, err
		}
	}
	switch {
	case vf.Registry():
		if declared {
			return nil, fmt.Errorf("%w: the schema registry defines the columns of %s tables: give no schema (choose the subject with --subject)", tables.ErrInvalid, vf)
		}
		if in.Value, err = h.subjectRole(ctx, vf, cmp.Or(def.Subject, def.Topic+"-value"), def.SubjectVersion, &def.Message); err != nil {
			return nil, err
		}
	case def.Infer:
		if declared {
			return nil, fmt.Errorf("%w: infer and a schema exclude each other", tables.ErrInvalid)
		}
		st, err := h.infer(ctx, def.Topic, offs)
		if err != nil {
			return nil, err
		}
		in.Columns = st.FieldList
	case declared:
		var d iceberg.Schema
		if err := json.Unmarshal(def.Schema, &d); err != nil {
			return nil, fmt.Errorf("%w: schema: %w", tables.ErrInvalid, err)
		}
		in.Columns = d.Fields()
	}
	var plan *schemas.Plan
	var sc *iceberg.Schema
	if in.Key != nil || in.Value != nil {
		if def.Start != "latest" { // else no retained record is indexed
			var kf, vf codec.Format // "" counts nothing
			if in.Key != nil {
				kf = in.KeyFormat
			}
			if in.Value != nil {
				vf = in.ValueFormat
			}
			if in.Counts, err = h.countWriters(ctx, def.Topic, offs, kf, vf); err != nil {
				return nil, err
			}
		} else {
			in.Counts.Exact = true
		}
		if plan, err = schemas.PlanCreate(in); err != nil {
			return nil, err
		}
		sc = plan.Initial
		// Version 0 keeps the subjects' defaults and aliases by field id.
		if len(plan.InitialFields) > 0 {
			if def.Fields, err = json.Marshal(plan.InitialFields); err != nil {
				return nil, err
			}
		}
	} else if sc, _, err = schemas.Initial(kf, vf, in.Columns); err != nil {
		return nil, fmt.Errorf("%w: %w", tables.ErrInvalid, err)
	}
	b, err := json.Marshal(iceberg.NewSchema(0, schemas.Columns(sc)...))
	if err != nil {
		return nil, err
	}
	def.Schema = b
	return plan, nil
}

// subjectRole returns the versions of subject, each stored by its
// registry id, with the start version given (0: the plan chooses). For
// protobuf, the one message the table holds is *message, or the latest
// version's first message, whose name it then sets in *message.
func (h *Handler) subjectRole(ctx context.Context, f codec.Format, subject string, start int, message *string) (*schemas.PlanRole, error) {
	src := h.cfg.Schemas.Source()
	if src == nil {
		return nil, fmt.Errorf("%w: format %s needs a schema registry: start the nodes with --schema-registry URL", tables.ErrInvalid, f)
	}
	vs, err := src.Versions(ctx, subject)
	if errors.Is(err, schemas.ErrNotFound) || (err == nil && len(vs) == 0) {
		return nil, fmt.Errorf("%w: subject %q has no schema in the registry", tables.ErrInvalid, subject)
	}
	if errors.Is(err, schemas.ErrInvalid) {
		return nil, fmt.Errorf("%w: subject %q: %w", tables.ErrInvalid, subject, err)
	}
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		if err := h.cfg.Schemas.Put(ctx, v.Schema); err != nil {
			return nil, err
		}
	}
	if f == codec.Protobuf && *message == "" {
		latest := vs[len(vs)-1].Schema
		if *message, err = protobuf.MessageName(latest, nil); err != nil {
			return nil, fmt.Errorf("%w: subject %q (schema id %d): %w", tables.ErrInvalid, subject, latest.ID, err)
		}
	}
	return &schemas.PlanRole{Format: f, Subject: subject, Versions: vs, Start: start, Message: *message}, nil
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
