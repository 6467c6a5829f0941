package devenv

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/minkhq/mink/codec/wire"
)

// EarthquakesAvro is the Avro schema of the USGS features in topic
// AvroTopic: earthquakes.schema.json in Avro (the same names, nesting and
// types; ["null", T] for each optional field; timestamp-millis for the
// timestamptz times).
//
//go:embed earthquakes.avsc
var EarthquakesAvro string

// The Avro demo: topic AvroTopic holds the feed in Avro, its schema
// registered under AvroSubject (the registry's default subject of the
// topic's values, <topic>-value), read as table demo.earthquakes_avro.
const (
	AvroTopic   = "earthquakes_avro"
	AvroSubject = AvroTopic + "-value"
)

// RegisterEarthquakesAvro registers EarthquakesAvro under AvroSubject in
// the registry at url and returns its schema id (the same id when it is
// registered already).
func RegisterEarthquakesAvro(ctx context.Context, url string) (int, error) {
	cl, err := sr.NewClient(sr.URLs(url), sr.UserAgent("mink-dev"))
	if err != nil {
		return 0, err
	}
	id, err := cl.RegisterSchema(ctx, AvroSubject, sr.Schema{Schema: EarthquakesAvro, Type: sr.TypeAvro}, -1, -1)
	if err != nil {
		return 0, fmt.Errorf("devenv: register %s: %w", AvroSubject, err)
	}
	return id, nil
}

// AvroEvents returns events with each Value replaced by the Feature in
// Avro binary (EarthquakesAvro, by hamba/avro) after the Confluent wire
// header of schema id: what a Confluent Avro producer writes. Keys and
// timestamps stay. A feature value that EarthquakesAvro cannot hold
// exactly (a fraction in an int, a key the schema lacks) is an error
// naming the event and the field.
func AvroEvents(events []Event, id int) ([]Event, error) {
	schema, err := avro.ParseWithCache(EarthquakesAvro, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("devenv: earthquakes.avsc: %w", err)
	}
	out := make([]Event, len(events))
	for i, e := range events {
		dec := json.NewDecoder(bytes.NewReader(e.Value))
		dec.UseNumber() // integers stay exact; doubles parse as the JSON table does
		var feature any
		if err := dec.Decode(&feature); err != nil {
			return nil, fmt.Errorf("devenv: event %s: %w", e.ID, err)
		}
		v, err := avroValue(schema, feature, "")
		if err != nil {
			return nil, fmt.Errorf("devenv: event %s: %w", e.ID, err)
		}
		b, err := avro.Marshal(schema, v)
		if err != nil {
			return nil, fmt.Errorf("devenv: event %s: avro: %w", e.ID, err)
		}
		e.Value = append(wire.AppendHeader(make([]byte, 0, 5+len(b)), id, nil), b...)
		out[i] = e
	}
	return out, nil
}

// avroValue converts a JSON value (decoded with UseNumber) to what
// hamba/avro encodes as schema s: map[string]any for a record, []any for
// an array, int32, float64, string, time.Time for timestamp-millis, nil
// for null, and {branch name: value} for a union's other branch. Only the
// types earthquakes.avsc uses.
func avroValue(s avro.Schema, v any, path string) (any, error) {
	field := func() string {
		if path == "" {
			return "value"
		}
		return "field " + path
	}
	if u, ok := s.(*avro.UnionSchema); ok {
		if v == nil && u.Nullable() {
			return nil, nil
		}
		for _, t := range u.Types() {
			if t.Type() != avro.Null {
				tv, err := avroValue(t, v, path)
				// hamba/avro takes a union's branch as a one-key map, keyed
				// by the branch's name in the union.
				return map[string]any{unionName(t): tv}, err
			}
		}
	}
	if v == nil {
		return nil, fmt.Errorf("%s: null, but the schema says %s", field(), s.Type())
	}
	switch s := s.(type) {
	case *avro.RecordSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: %T, not an object", field(), v)
		}
		out := make(map[string]any, len(s.Fields()))
		for _, f := range s.Fields() {
			fv, err := avroValue(f.Type(), m[f.Name()], strings.TrimPrefix(path+"."+f.Name(), "."))
			if err != nil {
				return nil, err
			}
			out[f.Name()] = fv
		}
		for k := range m {
			if !hasField(s, k) {
				return nil, fmt.Errorf("%s: key %q is not in the schema", field(), k)
			}
		}
		return out, nil
	case *avro.ArraySchema:
		a, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: %T, not an array", field(), v)
		}
		out := make([]any, len(a))
		for i, e := range a {
			ev, err := avroValue(s.Items(), e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = ev
		}
		return out, nil
	case *avro.PrimitiveSchema:
		if s.Type() == avro.String {
			str, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%s: %T, not a string", field(), v)
			}
			return str, nil
		}
		n, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%s: %T, not a number", field(), v)
		}
		switch {
		case s.Type() == avro.Double:
			return n.Float64()
		case s.Type() == avro.Int:
			i, err := n.Int64()
			if err != nil || i < math.MinInt32 || i > math.MaxInt32 {
				return nil, fmt.Errorf("%s: %s is not a 32-bit integer", field(), n)
			}
			return int32(i), nil
		case s.Type() == avro.Long && s.Logical() != nil && s.Logical().Type() == avro.TimestampMillis:
			ms, err := n.Int64()
			if err != nil {
				return nil, fmt.Errorf("%s: %s is not epoch milliseconds", field(), n)
			}
			return time.UnixMilli(ms).UTC(), nil
		}
	}
	return nil, fmt.Errorf("%s: schema type %s is not handled", field(), s.Type())
}

// unionName is how a union names its branch t (hamba/avro's
// schemaTypeName): a named type's full name, else the type, with
// ".<logical type>" when it has one.
func unionName(t avro.Schema) string {
	if n, ok := t.(avro.NamedSchema); ok {
		return n.FullName()
	}
	if p, ok := t.(*avro.PrimitiveSchema); ok && p.Logical() != nil {
		return string(p.Type()) + "." + string(p.Logical().Type())
	}
	return string(t.Type())
}

func hasField(s *avro.RecordSchema, name string) bool {
	for _, f := range s.Fields() {
		if f.Name() == name {
			return true
		}
	}
	return false
}
