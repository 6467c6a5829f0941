package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/testkit"
)

// icebirdSource is the Node package of the second reader: icebird (an
// Iceberg reader in JavaScript, on hyparquet) pinned by package-lock.json,
// and read.mjs, which loads a table through the REST catalog and prints its
// rows as JSON lines.
const icebirdSource = "icebird"

// TestIcebirdReadsEarthquakes reads the e2e table (the USGS feed in
// demo.earthquakes, three nodes) with a second Iceberg reader, icebird,
// through the REST catalog and the S3 API, and compares every row with its
// source record: _kafka (partition, offset, timestamp, timestamp type, key,
// headers) and every column of the value, nested structs and lists too.
// icebird inflates Avro deflate blocks with an inflater that rejects
// stored blocks; it reads Mink's manifests and manifest lists only because
// they use the null codec (icebergmeta/avro.go).
func TestIcebirdReadsEarthquakes(t *testing.T) {
	dir := icebirdInstall(t)
	var events []devenv.Event
	if path, ok := devenv.FindData(devenv.USGSFile); ok {
		var err error
		events, err = devenv.LoadUSGS(path)
		require.NoError(t, err)
	} else {
		t.Logf("shared data absent (../shared/data/%s): reading 500 generated events", devenv.USGSFile)
		events = generatedEvents(500)
	}

	env := startEnv(t, 3)
	createEarthquakes(t, env, events)

	rows := icebirdRead(t, dir, env.Nodes[1].URL(), "demo.earthquakes")
	require.Len(t, rows, len(events))

	var schema struct {
		Fields []icebergField `json:"fields"`
	}
	require.NoError(t, json.Unmarshal(devenv.EarthquakesSchema, &schema))
	byID := map[string]devenv.Event{}
	for _, e := range events {
		byID[e.ID] = e
	}
	seen := map[pk]bool{}
	seenIDs := map[string]bool{}
	perPartition := map[int32]int64{}
	for i, row := range rows {
		var k struct {
			Partition     int32   `json:"partition"`
			Offset        int64   `json:"offset,string"` // a BigInt in JavaScript
			Timestamp     string  `json:"timestamp"`
			TimestampType int32   `json:"timestamp_type"`
			Key           *string `json:"key"`
			Headers       []any   `json:"headers"`
		}
		require.NoError(t, remarshal(row["_kafka"], &k), "row %d: _kafka", i)
		id, _ := row["id"].(string)
		src, ok := byID[id]
		require.True(t, ok, "row %d: unknown event %q", i, row["id"])
		require.False(t, seenIDs[id], "event %s appears twice", id)
		seenIDs[id] = true
		at := pk{k.Partition, k.Offset}
		require.False(t, seen[at], "row %v appears twice", at)
		seen[at] = true
		perPartition[k.Partition]++

		require.NotNil(t, k.Key, "event %s: key", id)
		require.Equal(t, id, *k.Key, "event %s: key is the event id", id)
		ts, err := time.Parse(time.RFC3339Nano, k.Timestamp)
		require.NoError(t, err, "event %s: timestamp", id)
		require.True(t, src.Time.Equal(ts), "event %s: timestamp %s, want %s", id, ts, src.Time)
		require.Zero(t, k.TimestampType, "event %s: timestamp type (CreateTime)", id)
		require.NotNil(t, k.Headers, "event %s: headers", id)
		require.Empty(t, k.Headers, "event %s: headers", id)

		d := json.NewDecoder(bytes.NewReader(src.Value))
		d.UseNumber()
		var value map[string]any
		require.NoError(t, d.Decode(&value))
		for _, f := range schema.Fields {
			require.NoError(t, matchValue(f.Type, value[f.Name], row[f.Name]), "event %s: %s", id, f.Name)
		}
	}
	require.Len(t, seenIDs, len(events))
	for at := range seen {
		require.Less(t, at.offset, perPartition[at.partition], "offset %d of partition %d past the count", at.offset, at.partition)
	}
}

// generatedEvents returns n GeoJSON features shaped like the USGS feed's
// (nulls, nested struct, coordinates list), for machines without the
// shared data.
func generatedEvents(n int) []devenv.Event {
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	out := make([]devenv.Event, n)
	for i := range out {
		id := fmt.Sprintf("gen%05d", i)
		at := t0.Add(time.Duration(i) * 7919 * time.Millisecond)
		mag := "null"
		if i%7 != 0 {
			mag = fmt.Sprintf("%.2f", float64(i%90)/10-1)
		}
		v := fmt.Sprintf(`{"type":"Feature","properties":{"mag":%s,"place":"%d km N of Somewhere","time":%d,"updated":%d,"tz":null,`+
			`"felt":%d,"tsunami":%d,"sig":%d,"net":"gn","code":"%d","magType":"ml","type":"earthquake","title":"M %s - test"},`+
			`"geometry":{"type":"Point","coordinates":[%.4f,%.4f,%.2f]},"id":"%s"}`,
			mag, i%50, at.UnixMilli(), at.UnixMilli()+60000, i%3, i%2, i*3, i, mag,
			-179.5+float64(i%359), -60+float64(i%120), float64(i%700)/10, id)
		out[i] = devenv.Event{ID: id, Time: at, Value: []byte(v)}
	}
	return out
}

// icebergField is a field of an Iceberg schema in the spec's JSON form.
type icebergField struct {
	Name string          `json:"name"`
	Type json.RawMessage `json:"type"`
}

// matchValue compares got (a value as read.mjs prints it, decoded with
// UseNumber) with want (the source record's JSON value) for a column of
// Iceberg type typ: null with null, a number with the same number,
// a timestamp with the same instant, a struct field by field, a list
// element by element.
func matchValue(typ json.RawMessage, want, got any) error {
	if want == nil || got == nil {
		if want != nil || got != nil {
			return fmt.Errorf("got %v, want %v", got, want)
		}
		return nil
	}
	var prim string
	if json.Unmarshal(typ, &prim) == nil {
		switch prim {
		case "string":
			w, wok := want.(string)
			g, gok := got.(string)
			if !wok || !gok || w != g {
				return fmt.Errorf("got %v, want %v", got, want)
			}
		case "int", "long":
			w, _ := want.(json.Number)
			g, err := strconv.ParseInt(fmt.Sprint(got), 10, 64) // long: a decimal string
			if wi, werr := w.Int64(); err != nil || werr != nil || wi != g {
				return fmt.Errorf("got %v, want %v", got, want)
			}
		case "double":
			w, _ := want.(json.Number)
			g, _ := got.(json.Number)
			wf, werr := w.Float64()
			gf, gerr := g.Float64()
			if werr != nil || gerr != nil || wf != gf {
				return fmt.Errorf("got %v, want %v", got, want)
			}
		case "timestamptz":
			w, _ := want.(json.Number)
			ms, werr := w.Int64() // the source's epoch milliseconds
			g, _ := got.(string)
			gt, gerr := time.Parse(time.RFC3339Nano, g)
			if werr != nil || gerr != nil || !gt.Equal(time.UnixMilli(ms)) {
				return fmt.Errorf("got %v, want %v ms", got, want)
			}
		default:
			return fmt.Errorf("type %s: not compared by this test", prim)
		}
		return nil
	}
	var nested struct {
		Type    string          `json:"type"`
		Fields  []icebergField  `json:"fields"`
		Element json.RawMessage `json:"element"`
	}
	if err := json.Unmarshal(typ, &nested); err != nil {
		return err
	}
	switch nested.Type {
	case "struct":
		w, wok := want.(map[string]any)
		g, gok := got.(map[string]any)
		if !wok || !gok {
			return fmt.Errorf("got %v, want %v", got, want)
		}
		for _, f := range nested.Fields {
			if err := matchValue(f.Type, w[f.Name], g[f.Name]); err != nil {
				return fmt.Errorf("%s: %w", f.Name, err)
			}
		}
	case "list":
		w, wok := want.([]any)
		g, gok := got.([]any)
		if !wok || !gok || len(w) != len(g) {
			return fmt.Errorf("got %v, want %v", got, want)
		}
		for i := range w {
			if err := matchValue(nested.Element, w[i], g[i]); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
	default:
		return fmt.Errorf("type %s: not compared by this test", nested.Type)
	}
	return nil
}

func remarshal(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// icebirdRead runs read.mjs in dir on table (ns.name) of the catalog at
// catalogURL and returns its rows, each decoded with UseNumber.
func icebirdRead(t *testing.T, dir, catalogURL, table string) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "node", "read.mjs", catalogURL, table)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "icebird could not read %s: %s", table, stderr.String())
	var rows []map[string]any
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.UseNumber()
		var row map[string]any
		require.NoError(t, d.Decode(&row), "line %q", sc.Text())
		rows = append(rows, row)
	}
	require.NoError(t, sc.Err())
	return rows
}

// icebirdInstall returns a directory holding read.mjs next to the
// node_modules that `npm ci` installed from package-lock.json. The install
// is kept in the user's cache directory, keyed by the SHA-256 of
// package.json and package-lock.json, so that npm's downloads stay out of
// the repository and run once. The test skips when node or npm is missing,
// except in CI (CI set), where it fails: `make test` installs both
// (scripts/ensure-node).
func icebirdInstall(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not found (scripts/ensure-node installs it): %v", tool, err)
			}
			t.Skipf("%s not found: icebird is not run (`make test` installs Node.js with scripts/ensure-node)", tool)
		}
	}
	h := sha256.New()
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(icebirdSource, name))
		require.NoError(t, err)
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "mink-e2e", "icebird-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		require.NoError(t, os.MkdirAll(filepath.Dir(dir), 0o755))
		tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
		require.NoError(t, err)
		defer os.RemoveAll(tmp)
		for _, name := range []string{"package.json", "package-lock.json"} {
			copyFile(t, filepath.Join(icebirdSource, name), filepath.Join(tmp, name))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
		cmd.Dir = tmp
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "npm ci: %s", out)
		if err := os.Rename(tmp, dir); err != nil {
			// Another run may have installed the same lock first.
			_, statErr := os.Stat(filepath.Join(dir, "node_modules"))
			require.NoError(t, statErr, "install into %s: %v", dir, err)
		}
	}
	// read.mjs is copied on every run (it is not part of the key), written
	// aside and renamed so that a concurrent run never reads half of it.
	tmp := filepath.Join(dir, fmt.Sprintf("read.mjs.%d", os.Getpid()))
	copyFile(t, filepath.Join(icebirdSource, "read.mjs"), tmp)
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, "read.mjs")))
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o644))
}

// TestIcebirdReadsAvroDemo reads the `mink dev` demo's Avro table,
// demo.earthquakes_avro (its schema from the registry), with icebird, and
// compares every column of every row with the GeoJSON, as
// TestIcebirdReadsEarthquakes does for the json table: the Avro mapping
// yields the same columns (docs/formats.md).
func TestIcebirdReadsAvroDemo(t *testing.T) {
	dir := icebirdInstall(t)
	events := testkit.USGSEvents(t)
	env := startEnv(t, 1)
	url := env.Nodes[0].URL()
	note, err := devenv.Demo(context.Background(), env, events)
	require.NoError(t, err)
	require.Empty(t, note)
	table := "demo." + devenv.AvroTopic
	clustertest.WaitCaughtUp(t, url, table)

	rows := icebirdRead(t, dir, url, table)
	require.Len(t, rows, len(events))
	var schema struct {
		Fields []icebergField `json:"fields"`
	}
	require.NoError(t, json.Unmarshal(devenv.EarthquakesSchema, &schema))
	byID := map[string]devenv.Event{}
	for _, e := range events {
		byID[e.ID] = e
	}
	seen := map[string]bool{}
	for i, row := range rows {
		id, _ := row["id"].(string)
		src, ok := byID[id]
		require.True(t, ok, "row %d: unknown event %q", i, row["id"])
		require.False(t, seen[id], "event %s twice", id)
		seen[id] = true
		var k struct {
			Key *string `json:"key"`
		}
		require.NoError(t, remarshal(row["_kafka"], &k), "row %d: _kafka", i)
		require.NotNil(t, k.Key, "event %s: key", id)
		require.Equal(t, id, *k.Key, "event %s: key is the event id", id)
		d := json.NewDecoder(bytes.NewReader(src.Value))
		d.UseNumber()
		var value map[string]any
		require.NoError(t, d.Decode(&value))
		for _, f := range schema.Fields {
			require.NoError(t, matchValue(f.Type, value[f.Name], row[f.Name]), "event %s: %s", id, f.Name)
		}
	}
}
