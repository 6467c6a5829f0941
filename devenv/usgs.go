package devenv

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/internal/shareddata"
)

// EarthquakesSchema is the Iceberg schema (spec JSON) of the demo table
// demo.earthquakes: one row per GeoJSON Feature of the USGS feed.
//
//go:embed earthquakes.schema.json
var EarthquakesSchema []byte

// USGSFile is the name of the USGS feed in the shared data directory.
const USGSFile = "usgs-earthquakes-week.geojson"

// FindData returns the path of a file of the shared data directory
// (shareddata.Find): under $MINK_DATA_DIR, else ../shared/data (or
// ../../shared/data, …) from the working directory up. ok is false when it
// is absent.
func FindData(name string) (path string, ok bool) { return shareddata.Find(name) }

// Event is one USGS feature as produced to Kafka.
type Event struct {
	// ID is the event id (the record key).
	ID string
	// Time is the event time (the record timestamp), millisecond precision.
	Time time.Time
	// Value is the Feature's JSON exactly as in the feed.
	Value []byte
	// Mag, Place are the source values, for checks (Mag nil when null).
	Mag   *float64
	Place string
}

// LoadUSGS reads a GeoJSON FeatureCollection of the USGS feed.
func LoadUSGS(path string) ([]Event, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var fc struct {
		Features []json.RawMessage `json:"features"`
	}
	if err := json.Unmarshal(b, &fc); err != nil {
		return nil, fmt.Errorf("devenv: %s: %w", path, err)
	}
	out := make([]Event, 0, len(fc.Features))
	for i, raw := range fc.Features {
		var f struct {
			ID         string `json:"id"`
			Properties struct {
				Mag   *float64 `json:"mag"`
				Place string   `json:"place"`
				Time  int64    `json:"time"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fmt.Errorf("devenv: %s: feature %d: %w", path, i, err)
		}
		out = append(out, Event{ID: f.ID, Time: time.UnixMilli(f.Properties.Time), Value: raw,
			Mag: f.Properties.Mag, Place: f.Properties.Place})
	}
	return out, nil
}

// Produce writes events to topic (key = event id, timestamp = event
// time) and returns once every record is acknowledged. opts are the
// connection's other options (Env.KafkaOpts: TLS, SASL).
func Produce(ctx context.Context, brokers []string, topic string, events []Event, opts ...kgo.Opt) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic)}, opts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	recs := make([]*kgo.Record, len(events))
	for i, e := range events {
		recs[i] = &kgo.Record{Key: []byte(e.ID), Value: e.Value, Timestamp: e.Time}
	}
	return cl.ProduceSync(ctx, recs...).FirstErr()
}

// ErrNoData is returned when the shared data file is absent.
var ErrNoData = errors.New("devenv: shared data not found")
