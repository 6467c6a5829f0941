package devenv_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
)

// feature is a USGS feature as earthquakes.avsc decodes it: ["null", T]
// fields are pointers.
type feature struct {
	ID         string  `avro:"id"`
	Type       *string `avro:"type"`
	Properties struct {
		Mag     *float64   `avro:"mag"`
		Place   *string    `avro:"place"`
		Time    time.Time  `avro:"time"`
		Updated *time.Time `avro:"updated"`
		Tz      *int32     `avro:"tz"`
		Felt    *int32     `avro:"felt"`
		Cdi     *float64   `avro:"cdi"`
		Alert   *string    `avro:"alert"`
		Tsunami *int32     `avro:"tsunami"`
		Sig     *int32     `avro:"sig"`
		Nst     *int32     `avro:"nst"`
		Gap     *float64   `avro:"gap"`
		MagType *string    `avro:"magType"`
		Type    *string    `avro:"type"`
		Title   *string    `avro:"title"`
	} `avro:"properties"`
	Geometry *struct {
		Type        *string    `avro:"type"`
		Coordinates *[]float64 `avro:"coordinates"`
	} `avro:"geometry"`
}

// source is the same feature read from the GeoJSON.
type source struct {
	ID         string `json:"id"`
	Type       *string
	Properties struct {
		Mag     *float64
		Place   *string
		Time    int64
		Updated *int64
		Tz      *int32
		Felt    *int32
		Cdi     *float64
		Alert   *string
		Tsunami *int32
		Sig     *int32
		Nst     *int32
		Gap     *float64
		MagType *string `json:"magType"`
		Type    *string `json:"type"`
		Title   *string
	}
	Geometry *struct {
		Type        *string
		Coordinates *[]float64
	}
}

// `mink dev`'s demo: the Avro topic holds the whole feed, each record a
// Confluent Avro value of the schema registered under the topic's subject
// that decodes to the GeoJSON source's values, with the JSON topic's key,
// timestamp and partition; the nodes reach the registry.
func TestDemoAvroTopic(t *testing.T) {
	events := testkit.USGSEvents(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{PostgresURL: pgtest.Schema(t), EphemeralPorts: true})
	require.NoError(t, err)
	defer env.Stop()
	require.NotNil(t, env.Registry, "in-process registry")
	note, err := devenv.Demo(ctx, env, events)
	require.NoError(t, err)

	latest, err := env.Nodes[0].Registry().Latest(ctx, devenv.AvroSubject)
	require.NoError(t, err, "the node reaches the dev registry")
	require.Equal(t, wire.TypeAvro, latest.Type)
	require.JSONEq(t, devenv.EarthquakesAvro, latest.Text)

	t.Logf("note: %q", note)
	if note != "" { // nodes without the avro format yet: the guard
		require.Contains(t, note, `format "avro"`)
	} else {
		_, err := (&admin.Client{URL: env.Nodes[0].URL()}).TableJSON(ctx, "demo.earthquakes_avro")
		require.NoError(t, err)
	}

	jsonRecs := consume(t, ctx, env.Brokers, "earthquakes", len(events))
	avroRecs := consume(t, ctx, env.Brokers, devenv.AvroTopic, len(events))
	require.Len(t, avroRecs, 1707)
	schema, err := avro.ParseWithCache(latest.Text, "", &avro.SchemaCache{})
	require.NoError(t, err)

	src := map[string]source{}
	for _, e := range events {
		var s source
		require.NoError(t, json.Unmarshal(e.Value, &s))
		src[e.ID] = s
	}
	nulls := map[string]int{}
	for key, r := range avroRecs {
		j, ok := jsonRecs[key]
		require.True(t, ok, key)
		require.Equal(t, j.Partition, r.Partition, "same partition as the JSON topic: %s", key)
		require.Equal(t, j.Timestamp, r.Timestamp, key)

		id, rest, err := wire.Header(r.Value)
		require.NoError(t, err)
		require.Equal(t, latest.ID, id)
		var f feature
		require.NoError(t, avro.Unmarshal(schema, rest, &f), key)
		s := src[key]
		require.Equal(t, key, f.ID)
		require.Equal(t, s.ID, f.ID)
		require.Equal(t, s.Type, f.Type)
		p, sp := f.Properties, s.Properties
		require.Equal(t, sp.Mag, p.Mag, key)
		require.Equal(t, sp.Place, p.Place, key)
		require.Equal(t, sp.Time, p.Time.UnixMilli(), key)
		require.Equal(t, time.UnixMilli(sp.Time).UTC(), p.Time.UTC(), key)
		require.Equal(t, sp.Updated == nil, p.Updated == nil, key)
		if sp.Updated != nil {
			require.Equal(t, *sp.Updated, p.Updated.UnixMilli(), key)
		}
		for name, pair := range map[string][2]any{"tz": {sp.Tz, p.Tz}, "felt": {sp.Felt, p.Felt}, "cdi": {sp.Cdi, p.Cdi},
			"alert": {sp.Alert, p.Alert}, "tsunami": {sp.Tsunami, p.Tsunami}, "sig": {sp.Sig, p.Sig}, "nst": {sp.Nst, p.Nst},
			"gap": {sp.Gap, p.Gap}, "magType": {sp.MagType, p.MagType}, "type": {sp.Type, p.Type}, "title": {sp.Title, p.Title}} {
			require.Equal(t, pair[0], pair[1], "%s properties.%s", key, name)
			if fmt.Sprint(pair[1]) == "<nil>" {
				nulls[name]++
			}
		}
		require.Equal(t, s.Geometry == nil, f.Geometry == nil, key)
		if s.Geometry != nil {
			require.Equal(t, s.Geometry.Type, f.Geometry.Type, key)
			require.Equal(t, s.Geometry.Coordinates, f.Geometry.Coordinates, key)
			require.Len(t, *f.Geometry.Coordinates, 3, key)
		}
	}
	// The feed has nulls and values both; both came through.
	require.Positive(t, nulls["felt"])
	require.Less(t, nulls["felt"], len(events))
}

// consume reads n records of topic, by key.
func consume(t *testing.T, ctx context.Context, brokers []string, topic string, n int) map[string]*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	out := map[string]*kgo.Record{}
	total := 0
	for total < n {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "%s: %d of %d records", topic, total, n)
		fs.EachError(func(_ string, _ int32, err error) { require.NoError(t, err) })
		fs.EachRecord(func(r *kgo.Record) {
			total++
			out[string(r.Key)] = r
		})
	}
	require.Len(t, out, n, "%s: one record per key", topic)
	return out
}

// AvroEvents refuses a value the schema cannot hold exactly, naming the
// field.
func TestAvroEventsRefuses(t *testing.T) {
	for value, want := range map[string]string{
		`{"id":"a","properties":{"time":1,"tz":1.5}}`:                           "field properties.tz: 1.5 is not a 32-bit integer",
		`{"id":"a","properties":{"time":1,"sig":3000000000}}`:                   "field properties.sig: 3000000000 is not a 32-bit integer",
		`{"id":"a","properties":{"time":null}}`:                                 "field properties.time: null, but the schema says long",
		`{"id":"a","properties":{"time":1},"extra":true}`:                       `value: key "extra" is not in the schema`,
		`{"id":"a","properties":{"time":1,"place":7}}`:                          "field properties.place: json.Number, not a string",
		`{"id":"a","properties":{"time":1},"geometry":{"coordinates":[1,"x"]}}`: "field geometry.coordinates[1]: string, not a number",
	} {
		_, err := devenv.AvroEvents([]devenv.Event{{ID: "a", Value: []byte(value)}}, 1)
		require.ErrorContains(t, err, "devenv: event a: "+want, value)
	}
	out, err := devenv.AvroEvents([]devenv.Event{{ID: "a", Value: []byte(`{"id":"a","properties":{"time":-1,"mag":2}}`)}}, 7)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(out[0].Value), "\x00\x00\x00\x00\x07"))
}

// `mink dev` prints the registry's URL with the catalog's, says once that
// the Avro table waits for the avro format (while the nodes lack it), and
// stops the registry with the rest.
func TestDevBanner(t *testing.T) {
	path, ok := devenv.FindData(devenv.USGSFile)
	if !ok {
		t.Skip("shared data absent")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &testkit.SyncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- devenv.Dev(ctx, devenv.DevConfig{PostgresURL: pgtest.Schema(t), EphemeralPorts: true, DataFile: path,
			Out: out, Logger: slog.New(slog.DiscardHandler)})
	}()
	testkit.WaitFor(t, "the banner", func() bool { return strings.Contains(out.String(), "Ctrl-C") })
	cancel()
	require.NoError(t, <-done)

	banner := out.String()
	m := regexp.MustCompile(`Schema Registry: +(http://127\.0\.0\.1:\d+)\n`).FindStringSubmatch(banner)
	require.NotNil(t, m, banner)
	require.Contains(t, banner, `and in Avro into topic "earthquakes_avro" (schema subject "earthquakes_avro-value").`)
	require.Contains(t, banner, "scan demo.earthquakes_avro")
	// Each command line starts with the command that runs mink, never a
	// URL (the banner's arguments are positional).
	require.NotContains(t, banner, "8181 scan")
	require.NotRegexp(t, `http://[0-9.:]+ (scan|status)`, banner)
	if n := strings.Count(banner, "cannot read Avro tables yet"); n != 0 {
		require.Equal(t, 1, n, banner)
	}
	_, err := http.Get(m[1] + "/subjects")
	require.Error(t, err, "the registry stopped with mink dev")
}
