package compat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/realkafka"
	"github.com/minkhq/mink/internal/registryproc"
	"github.com/minkhq/mink/internal/shareddata"
)

// The USGS feed produced by confluent-kafka's own AvroSerializer,
// ProtobufSerializer and JSONSchemaSerializer (compat/clients/
// registry_produce.py) through a real Schema Registry (Apicurio, its
// Confluent-compatible API) reads back from Mink's tables of value formats
// avro, protobuf and json-schema equal to the GeoJSON source, every field
// of every feature.
func TestConfluentSerializersThroughRealRegistry(t *testing.T) {
	timePart(t, "Apicurio Registry and confluent-kafka serializers")
	usgs, ok := shareddata.Find("usgs-earthquakes-week.geojson")
	if !ok {
		t.Fatal("the USGS feed (shared/data/usgs-earthquakes-week.geojson) is not found")
	}
	registry := registryproc.Start(t)

	env := clustertest.New(t, clustertest.RealKafka(realkafka.Start(t, realkafka.Options{})))
	node := env.StartNode(clustertest.NodeOptions{Args: []string{"--schema-registry", registry}})
	formats := []string{"avro", "protobuf", "json-schema"}
	for _, f := range formats {
		env.CreateTopic("usgs-"+f, 3)
	}

	start := time.Now()
	cmd := exec.Command(python(t), "clients/registry_produce.py", strings.Join(env.Brokers, ","), registry, "usgs-", usgs)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("registry_produce.py: %v\n%s", err, stderr.String())
	}
	var acked []struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		Offset    int64  `json:"offset"`
		ID        string `json:"id"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &acked); err != nil {
		t.Fatalf("registry_produce.py printed %q: %v", stdout.String(), err)
	}
	t.Logf("registry_produce.py: %d records acknowledged in %s", len(acked), time.Since(start).Round(time.Millisecond))

	want := loadSource(t, usgs)
	component := "Apicurio Registry " + registryproc.Version + " (Confluent API)"
	client := "confluent-kafka " + confluentKafkaVersion(t) + " serializers"
	for _, f := range formats {
		check(t, component, client, f+": every value equals the feed", func(t *testing.T) {
			topic := "usgs-" + f
			name := "usgs." + strings.ReplaceAll(f, "-", "_")
			ns, tbl, _ := strings.Cut(name, ".")
			env.CreateTable(node.URL(), map[string]any{"namespace": ns, "name": tbl, "topic": topic, "value_format": f})
			ends := map[int32]int64{}
			at := map[string][2]int64{} // id → partition, offset
			for _, a := range acked {
				if a.Topic != topic {
					continue
				}
				if a.Offset+1 > ends[a.Partition] {
					ends[a.Partition] = a.Offset + 1
				}
				at[a.ID] = [2]int64{int64(a.Partition), a.Offset}
			}
			if len(at) != len(want) {
				t.Fatalf("%d records of %s acknowledged, the feed has %d", len(at), topic, len(want))
			}
			clustertest.WaitCommitted(t, node.URL(), name, ends, clustertest.CommitTimeout)
			rows := readRows(t, clustertest.ScanAll(t, node.URL(), name))
			compare(t, name, want, rows, at)
		})
	}
}

// doubles are the GeoJSON properties whose column is a double (the others
// are integers, strings or times).
var doubles = map[string]bool{"mag": true, "cdi": true, "mmi": true, "dmin": true, "rms": true, "gap": true}

// loadSource reads the feed as the rows every table must hold: id →
// {"id", "type", "properties": {...}, "geometry": {"type", "coordinates"}},
// with integers as int64, doubles as float64 and times (time, updated) as
// epoch milliseconds (int64).
func loadSource(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fc struct {
		Features []struct {
			ID         string                     `json:"id"`
			Type       *string                    `json:"type"`
			Properties map[string]json.Number     `json:"-"`
			RawProps   map[string]json.RawMessage `json:"properties"`
			Geometry   *struct {
				Type        *string       `json:"type"`
				Coordinates []json.Number `json:"coordinates"`
			} `json:"geometry"`
		} `json:"features"`
	}
	if err := json.Unmarshal(b, &fc); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]map[string]any, len(fc.Features))
	for _, f := range fc.Features {
		props := map[string]any{}
		for k, raw := range f.RawProps {
			var v any
			d := json.NewDecoder(bytes.NewReader(raw))
			d.UseNumber()
			if err := d.Decode(&v); err != nil {
				t.Fatal(err)
			}
			props[k] = norm(t, k, v)
		}
		row := map[string]any{"id": f.ID, "type": strOrNil(f.Type), "properties": props}
		if f.Geometry == nil {
			row["geometry"] = nil
		} else {
			coords := []any{}
			for _, c := range f.Geometry.Coordinates {
				x, err := c.Float64()
				if err != nil {
					t.Fatal(err)
				}
				coords = append(coords, x)
			}
			row["geometry"] = map[string]any{"type": strOrNil(f.Geometry.Type), "coordinates": coords}
		}
		out[f.ID] = row
	}
	return out
}

func strOrNil(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// norm is a GeoJSON property's value as the table must hold it.
func norm(t *testing.T, key string, v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v // string or nil
	}
	if doubles[key] {
		f, err := n.Float64()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("property %s = %s: %v", key, n, err)
	}
	return i
}

// readRows returns the table's rows by id, each as nested maps of its
// value columns (not _kafka): integers as int64, doubles as float64,
// timestamps as epoch milliseconds (int64; a timestamp that is not a whole
// number of milliseconds is kept as a string naming its microseconds, so
// that it differs), lists as []any, and the Kafka partition and offset
// under "_at".
func readRows(t *testing.T, at arrow.Table) map[string]map[string]any {
	t.Helper()
	rows := map[string]map[string]any{}
	sc := at.Schema()
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			row := map[string]any{}
			for c, f := range sc.Fields() {
				if f.Name == "_kafka" {
					k := value(rec.Column(c), i).(map[string]any)
					row["_at"] = [2]int64{k["partition"].(int64), k["offset"].(int64)}
					continue
				}
				row[f.Name] = value(rec.Column(c), i)
			}
			id, _ := row["id"].(string)
			if _, dup := rows[id]; dup {
				t.Errorf("id %q read twice", id)
			}
			rows[id] = row
		}
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func value(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch v := a.(type) {
	case *array.String:
		return v.Value(i)
	case *array.LargeString:
		return v.Value(i)
	case *array.Binary:
		return string(v.Value(i))
	case *array.Int32:
		return int64(v.Value(i))
	case *array.Int64:
		return v.Value(i)
	case *array.Float64:
		return v.Value(i)
	case *array.Float32:
		return float64(v.Value(i))
	case *array.Boolean:
		return v.Value(i)
	case *array.Timestamp:
		us := int64(v.Value(i))
		if unit := v.DataType().(*arrow.TimestampType).Unit; unit != arrow.Microsecond {
			return fmt.Sprintf("timestamp in unit %s: %d", unit, us)
		}
		if us%1000 != 0 {
			return fmt.Sprintf("%d µs", us)
		}
		return us / 1000
	case *array.Struct:
		st := v.DataType().(*arrow.StructType)
		m := map[string]any{}
		for f := 0; f < v.NumField(); f++ {
			m[st.Field(f).Name] = value(v.Field(f), i)
		}
		return m
	case *array.List:
		start, end := v.ValueOffsets(i)
		out := []any{}
		for j := start; j < end; j++ {
			out = append(out, value(v.ListValues(), int(j)))
		}
		return out
	}
	return fmt.Sprintf("unhandled %s", a.DataType())
}

// compare asserts that the table holds exactly the source's rows, each at
// the partition and offset its record was acknowledged at.
func compare(t *testing.T, name string, want, got map[string]map[string]any, at map[string][2]int64) {
	t.Helper()
	var diffs []string
	add := func(format string, args ...any) {
		if len(diffs) < 15 {
			diffs = append(diffs, fmt.Sprintf(format, args...))
		}
	}
	var bad, missing int
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			missing++
			add("%s: missing", id)
			continue
		}
		if g["_at"] != at[id] {
			bad++
			add("%s: at partition, offset %v, acknowledged at %v", id, g["_at"], at[id])
			continue
		}
		delete(g, "_at")
		if !reflect.DeepEqual(w, g) {
			bad++
			add("%s: %s", id, diff(w, g, ""))
		}
	}
	extra := len(got) - (len(want) - missing)
	if bad+missing+extra > 0 {
		t.Fatalf("%s: %d rows, %d in the source: %d missing, %d not in the source, %d differ:\n  %s",
			name, len(got), len(want), missing, extra, bad, strings.Join(diffs, "\n  "))
	}
	t.Logf("%s: all %d rows equal the source (id, type, 26 properties, geometry)", name, len(want))
}

// diff names the first paths where w and g differ.
func diff(w, g any, path string) string {
	wm, ok1 := w.(map[string]any)
	gm, ok2 := g.(map[string]any)
	if ok1 && ok2 {
		var out []string
		for k := range wm {
			if _, ok := gm[k]; !ok {
				out = append(out, fmt.Sprintf("%s%s: no column", path, k))
			} else if !reflect.DeepEqual(wm[k], gm[k]) {
				out = append(out, diff(wm[k], gm[k], path+k+"."))
			}
		}
		for k := range gm {
			if _, ok := wm[k]; !ok {
				out = append(out, fmt.Sprintf("%s%s: not in the source (%v)", path, k, gm[k]))
			}
		}
		return strings.Join(out, "; ")
	}
	return fmt.Sprintf("%s = %#v (%T), source %#v (%T)", strings.TrimSuffix(path, "."), g, g, w, w)
}
