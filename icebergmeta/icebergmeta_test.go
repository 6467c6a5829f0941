package icebergmeta_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/internal/testkit"
)

const location = "s3://mink/demo/earthquakes"

var tableUUID = uuid.MustParse("6a3c4f8e-1b2d-4c5e-8f90-a1b2c3d4e5f6")

// clock returns the time of the records the tests' files hold (t0) and the
// time of a first commit (now): a second past the wall clock, above the
// last-updated-ms NewTable stamps, on a whole millisecond as metadata
// keeps it.
func clock() (t0, now time.Time) {
	return time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC), time.Now().Add(time.Second).Truncate(time.Millisecond)
}

// earthquakesSchema is the schema of a json table as docs/design.md §4.2 lays it
// out: _kafka (ids 1-10), then the value's fields from id 11.
func earthquakesSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		testkit.KafkaField(),
		iceberg.NestedField{ID: 11, Name: "mag", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 12, Name: "place", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 13, Name: "time", Type: iceberg.PrimitiveTypes.TimestampTz},
	)
}

// Single-value serialization (Iceberg spec, Appendix D).
func le32(v int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
func le64(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }
func f64(v float64) []byte {
	return binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))
}

// rangeFile is the data file of the offsets [start, end) of partition p, as
// the indexer would record it: one record per millisecond from t0.
func rangeFile(p int32, start, end int64, t0 time.Time, minMag, maxMag float64) icebergmeta.AddedFile {
	n := end - start
	tsMin := t0.UnixMicro()
	tsMax := t0.Add(time.Duration(n-1) * time.Millisecond).UnixMicro()
	counts := map[int]int64{2: n, 3: n, 4: n, 5: n, 6: n, 9: 0, 10: 0, 11: n, 12: n, 13: n}

	return icebergmeta.AddedFile{
		Path:      fmt.Sprintf("%s/data/%d/%d-%d-1.parquet", location, p, start, end),
		Partition: p,
		FileSize:  4096 + 37*n,
		Stats: datafile.Stats{
			RecordCount:     n,
			ColumnSizes:     map[int]int64{2: 40, 3: 8 * n, 4: 8 * n, 5: 40, 6: 12 * n, 11: 8 * n, 12: 20 * n, 13: 8 * n},
			ValueCounts:     counts,
			NullValueCounts: map[int]int64{2: 0, 3: 0, 4: 0, 5: 0, 6: n / 4, 11: 0, 12: 1, 13: 0},
			NaNValueCounts:  map[int]int64{11: n / 8},
			LowerBounds: map[int][]byte{
				2: le32(p), 3: le64(start), 4: le64(tsMin), 5: le32(0),
				11: f64(minMag), 12: []byte("10 km N of Anza, CA"), 13: le64(tsMin),
			},
			UpperBounds: map[int][]byte{
				2: le32(p), 3: le64(end - 1), 4: le64(tsMax), 5: le32(0),
				11: f64(maxMag), 12: []byte("Volcano, Hawaii"), 13: le64(tsMax),
			},
			SplitOffsets: []int64{4},
			MinTimestamp: tsMin,
			MaxTimestamp: tsMax,
		},
	}
}

// store is the caller's side: what Mink keeps in Postgres, here a map.
type store struct {
	mu    sync.Mutex
	files map[string][]byte
}

func newStore() *store { return &store{files: map[string][]byte{}} }

func (s *store) put(loc string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[loc] = bytes.Clone(content)
}

func (s *store) read(_ context.Context, loc string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.files[loc]
	if !ok {
		return nil, fmt.Errorf("no file %s", loc)
	}

	return bytes.Clone(b), nil
}

// commit runs Append on the current metadata and stores what it produced.
func (s *store) commit(t testing.TB, metaLoc string, meta []byte, snapshotID int64, now time.Time, files ...icebergmeta.AddedFile) *icebergmeta.CommitResult {
	t.Helper()
	res, err := icebergmeta.Append(context.Background(), icebergmeta.AppendInput{
		Metadata: meta, MetadataLocation: metaLoc, Added: files,
		SnapshotID: snapshotID, Now: now, Read: s.read,
	})
	require.NoError(t, err)
	s.keep(res)
	return res
}

// keep stores the files and the metadata a commit produced.
func (s *store) keep(res *icebergmeta.CommitResult) {
	for _, f := range res.Files {
		s.put(f.Location, f.Content)
	}
	s.put(res.MetadataLocation, res.Metadata)
}

// newTable stores the metadata of a new table of earthquakesSchema with
// props, and returns its location and bytes.
func (s *store) newTable(t testing.TB, props iceberg.Properties) (string, []byte) {
	t.Helper()
	metaLoc, meta, err := icebergmeta.NewTable(earthquakesSchema(), location, tableUUID, props)
	require.NoError(t, err)
	s.put(metaLoc, meta)
	return metaLoc, meta
}

// memIO is iceberg-go's in-memory IO over the store's files.
func (s *store) memIO(t *testing.T) iceio.IO {
	fs := iceio.NewMemFS()
	s.mu.Lock()
	defer s.mu.Unlock()
	for loc, b := range s.files {
		require.NoError(t, fs.WriteFile(loc, b))
	}

	return fs
}

func loadTable(t *testing.T, s *store, metaLoc string) *table.Table {
	t.Helper()
	b, err := s.read(context.Background(), metaLoc)
	require.NoError(t, err)
	meta, err := table.ParseMetadataBytes(b)
	require.NoError(t, err)
	fs := s.memIO(t)

	return table.New(table.Identifier{"demo", "earthquakes"}, meta, metaLoc,
		func(context.Context) (iceio.IO, error) { return fs, nil }, nil)
}

func TestNewTableAndTwoAppendsReadBackWithIcebergGo(t *testing.T) {
	ctx := context.Background()
	s := newStore()
	metaLoc, meta, err := icebergmeta.NewTable(earthquakesSchema(), location, tableUUID,
		map[string]string{"mink.topic": "earthquakes", "write.metadata.previous-versions-max": "50"})
	require.NoError(t, err)
	require.Equal(t, location+"/metadata/00000-"+tableUUID.String()+".metadata.json", metaLoc)
	s.put(metaLoc, meta)

	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	now1 := time.Now().Add(time.Second).Truncate(time.Millisecond)
	now2 := now1.Add(10 * time.Second)
	first := []icebergmeta.AddedFile{
		rangeFile(0, 0, 500, t0, 0.2, 5.1),
		rangeFile(0, 500, 1200, t0.Add(time.Minute), 0.1, 6.3),
		rangeFile(1, 0, 800, t0, 0.5, 4.4),
	}
	second := []icebergmeta.AddedFile{
		rangeFile(0, 1200, 1500, t0.Add(2*time.Minute), 1.0, 2.0),
		rangeFile(1, 800, 1000, t0.Add(time.Minute), 0.9, 3.7),
		rangeFile(1, 1000, 1100, t0.Add(2*time.Minute), 2.2, 2.9),
	}
	r1 := s.commit(t, metaLoc, meta, 1001, now1, first...)
	r2 := s.commit(t, r1.MetadataLocation, r1.Metadata, 2002, now2, second...)

	require.Equal(t, int64(1), r1.SequenceNumber)
	require.Equal(t, int64(2), r2.SequenceNumber)
	require.Regexp(t, `^s3://mink/demo/earthquakes/metadata/00001-[0-9a-f-]{36}\.metadata\.json$`, r1.MetadataLocation)
	require.Regexp(t, `^s3://mink/demo/earthquakes/metadata/00002-[0-9a-f-]{36}\.metadata\.json$`, r2.MetadataLocation)
	require.Regexp(t, `^s3://mink/demo/earthquakes/metadata/snap-2002-1-[0-9a-f-]{36}\.avro$`, r2.ManifestList)
	require.Len(t, r2.Files, 2)
	require.Regexp(t, `^s3://mink/demo/earthquakes/metadata/[0-9a-f-]{36}-m0\.avro$`, r2.Files[0].Location)
	require.Equal(t, r2.ManifestList, r2.Files[1].Location)

	tbl := loadTable(t, s, r2.MetadataLocation)
	md := tbl.Metadata()

	// Snapshots: parent chain, sequence numbers, timestamps, branch main.
	require.Len(t, md.Snapshots(), 2)
	s1, s2 := md.SnapshotByID(1001), md.SnapshotByID(2002)
	require.NotNil(t, s1)
	require.NotNil(t, s2)
	require.Nil(t, s1.ParentSnapshotID)
	require.Equal(t, int64(1001), *s2.ParentSnapshotID)
	require.Equal(t, int64(1), s1.SequenceNumber)
	require.Equal(t, int64(2), s2.SequenceNumber)
	require.Equal(t, int64(2), md.LastSequenceNumber())
	require.Equal(t, now1.UnixMilli(), s1.TimestampMs)
	require.Equal(t, now2.UnixMilli(), s2.TimestampMs)
	require.Equal(t, now2.UnixMilli(), md.LastUpdatedMillis())
	require.Equal(t, int64(2002), tbl.CurrentSnapshot().SnapshotID)
	require.Equal(t, int64(2002), md.SnapshotByName(table.MainBranch).SnapshotID)
	require.Equal(t, r2.ManifestList, s2.ManifestList)
	require.Equal(t, 0, *s2.SchemaID)

	// Summaries.
	require.Equal(t, table.OpAppend, s1.Summary.Operation)
	require.Equal(t, iceberg.Properties{
		"added-data-files": "3", "added-records": "2000", "added-files-size": "86288",
		"changed-partition-count": "2",
		"total-data-files":        "3", "total-records": "2000", "total-files-size": "86288",
		"total-delete-files": "0", "total-position-deletes": "0", "total-equality-deletes": "0",
	}, s1.Summary.Properties)
	require.Equal(t, table.OpAppend, s2.Summary.Operation)
	require.Equal(t, iceberg.Properties{
		"added-data-files": "3", "added-records": "600", "added-files-size": "34488",
		"changed-partition-count": "2",
		"total-data-files":        "6", "total-records": "2600", "total-files-size": "120776",
		"total-delete-files": "0", "total-position-deletes": "0", "total-equality-deletes": "0",
	}, s2.Summary.Properties)

	// Metadata log: the two previous files, oldest first; properties as given.
	var log []string
	for e := range md.PreviousFiles() {
		log = append(log, e.MetadataFile)
	}
	require.Equal(t, []string{metaLoc, r1.MetadataLocation}, log)
	require.Equal(t, iceberg.Properties{"mink.topic": "earthquakes", "write.metadata.previous-versions-max": "50"}, md.Properties())
	require.Equal(t, tableUUID, md.TableUUID())

	// Every appended file is planned exactly once, with what was recorded.
	tasks, err := tbl.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	require.Len(t, tasks, 6)
	want := map[string]icebergmeta.AddedFile{}
	seqOf := map[string]int64{}
	for _, f := range first {
		want[f.Path], seqOf[f.Path] = f, 1
	}
	for _, f := range second {
		want[f.Path], seqOf[f.Path] = f, 2
	}
	seen := map[string]bool{}
	for _, task := range tasks {
		df := task.File
		f, ok := want[df.FilePath()]
		require.True(t, ok, "unexpected file %s", df.FilePath())
		require.False(t, seen[df.FilePath()], "file %s planned twice", df.FilePath())
		seen[df.FilePath()] = true
		require.Equal(t, iceberg.EntryContentData, df.ContentType())
		require.Equal(t, iceberg.ParquetFile, df.FileFormat())
		require.Equal(t, map[int]any{icebergmeta.PartitionFieldID: f.Partition}, df.Partition())
		require.Equal(t, f.Stats.RecordCount, df.Count())
		require.Equal(t, f.FileSize, df.FileSizeBytes())
		require.Equal(t, f.Stats.ColumnSizes, df.ColumnSizes())
		require.Equal(t, f.Stats.ValueCounts, df.ValueCounts())
		require.Equal(t, f.Stats.NullValueCounts, df.NullValueCounts())
		require.Equal(t, f.Stats.NaNValueCounts, df.NaNValueCounts())
		require.Equal(t, f.Stats.LowerBounds, df.LowerBoundValues())
		require.Equal(t, f.Stats.UpperBounds, df.UpperBoundValues())
		require.Equal(t, f.Stats.SplitOffsets, df.SplitOffsets())
		require.NotNil(t, task.DataSequenceNumber)
		require.Equal(t, seqOf[df.FilePath()], *task.DataSequenceNumber)
	}

	// The manifest list: the new manifest first, then the parent's, each
	// with its own sequence number and partition summary.
	manifests, err := s2.Manifests(s.memIO(t))
	require.NoError(t, err)
	require.Len(t, manifests, 2)
	require.Equal(t, r2.Files[0].Location, manifests[0].FilePath())
	require.Equal(t, r1.Files[0].Location, manifests[1].FilePath())
	for i, m := range manifests {
		wantSeq, wantSnap := int64(2-i), []int64{2002, 1001}[i]
		require.Equal(t, 2, m.Version())
		require.Equal(t, iceberg.ManifestContentData, m.ManifestContent())
		require.Equal(t, wantSeq, m.SequenceNum())
		require.Equal(t, wantSeq, m.MinSequenceNum())
		require.Equal(t, wantSnap, m.SnapshotID())
		require.Equal(t, int32(3), m.AddedDataFiles())
		require.Equal(t, int32(0), m.ExistingDataFiles())
		require.Equal(t, int32(0), m.PartitionSpecID())
		require.Equal(t, int64(len(s.files[m.FilePath()])), m.Length())
		require.Len(t, m.Partitions(), 1)
		require.Equal(t, le32(0), *m.Partitions()[0].LowerBound)
		require.Equal(t, le32(1), *m.Partitions()[0].UpperBound)
		var entries []iceberg.ManifestEntry
		for e, err := range m.Entries(s.memIO(t), false) {
			require.NoError(t, err)
			entries = append(entries, e)
		}
		require.Len(t, entries, 3)
		for _, e := range entries {
			require.Equal(t, iceberg.EntryStatusADDED, e.Status())
			require.Equal(t, wantSnap, e.SnapshotID())
			require.Equal(t, wantSeq, e.SequenceNum())
		}
	}

	// A filter on _kafka.partition prunes to that partition's files.
	tasks, err = tbl.Scan(table.WithRowFilter(
		iceberg.EqualTo(iceberg.Reference("_kafka.partition"), int32(1)))).PlanFiles(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{first[2].Path, second[1].Path, second[2].Path}, taskPaths(tasks))

	// And one on _kafka.offset prunes by the nested column's bounds.
	tasks, err = tbl.Scan(table.WithRowFilter(iceberg.NewAnd(
		iceberg.EqualTo(iceberg.Reference("_kafka.partition"), int32(0)),
		iceberg.GreaterThanEqual(iceberg.Reference("_kafka.offset"), int64(1199))))).PlanFiles(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{first[1].Path, second[0].Path}, taskPaths(tasks))

	// Time travel to the first snapshot sees only its files.
	tasks, err = tbl.Scan(table.WithSnapshotID(1001)).PlanFiles(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{first[0].Path, first[1].Path, first[2].Path}, taskPaths(tasks))
}

func taskPaths(tasks []table.FileScanTask) []string {
	out := make([]string, 0, len(tasks))
	for _, task := range tasks {
		out = append(out, task.File.FilePath())
	}
	slices.Sort(out)

	return out
}

// TestMetadataGolden pins the schema field ids and the partition spec as
// they appear in the metadata JSON engines read (docs/design.md §4.2).
func TestMetadataGolden(t *testing.T) {
	_, meta, err := icebergmeta.NewTable(earthquakesSchema(), location+"/", tableUUID, nil)
	require.NoError(t, err)
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(meta, &doc))

	require.JSONEq(t, `2`, string(doc["format-version"]))
	require.JSONEq(t, `"`+tableUUID.String()+`"`, string(doc["table-uuid"]))
	require.JSONEq(t, `"s3://mink/demo/earthquakes"`, string(doc["location"]))
	require.JSONEq(t, `0`, string(doc["last-sequence-number"]))
	require.JSONEq(t, `13`, string(doc["last-column-id"]))
	require.JSONEq(t, `0`, string(doc["current-schema-id"]))
	require.JSONEq(t, `[{"spec-id":0,"fields":[
		{"source-id":2,"field-id":1000,"name":"_kafka_partition","transform":"identity"}]}]`,
		string(doc["partition-specs"]))
	require.JSONEq(t, `0`, string(doc["default-spec-id"]))
	require.JSONEq(t, `1000`, string(doc["last-partition-id"]))
	require.JSONEq(t, `[{"order-id":0,"fields":[]}]`, string(doc["sort-orders"]))
	require.JSONEq(t, `0`, string(doc["default-sort-order-id"]))
	if cur, ok := doc["current-snapshot-id"]; ok {
		require.JSONEq(t, `null`, string(cur))
	}
	require.JSONEq(t, `[{"type":"struct","schema-id":0,"fields":[
		{"id":1,"name":"_kafka","required":true,"type":{"type":"struct","fields":[
			{"id":2,"name":"partition","required":true,"type":"int"},
			{"id":3,"name":"offset","required":true,"type":"long"},
			{"id":4,"name":"timestamp","required":true,"type":"timestamptz"},
			{"id":5,"name":"timestamp_type","required":true,"type":"int"},
			{"id":6,"name":"key","required":false,"type":"binary"},
			{"id":7,"name":"headers","required":true,"type":{"type":"list","element-id":8,"element-required":true,
				"element":{"type":"struct","fields":[
					{"id":9,"name":"key","required":true,"type":"string"},
					{"id":10,"name":"value","required":false,"type":"binary"}]}}}]}},
		{"id":11,"name":"mag","required":false,"type":"double"},
		{"id":12,"name":"place","required":false,"type":"string"},
		{"id":13,"name":"time","required":false,"type":"timestamptz"}],
		"identifier-field-ids":[]}]`,
		string(doc["schemas"]))

	spec, err := icebergmeta.PartitionSpec(earthquakesSchema())
	require.NoError(t, err)
	specJSON, err := json.Marshal(spec)
	require.NoError(t, err)
	require.JSONEq(t, `{"spec-id":0,"fields":[
		{"source-id":2,"field-id":1000,"name":"_kafka_partition","transform":"identity"}]}`, string(specJSON))
}

func TestNewTableKeepsFieldIDs(t *testing.T) {
	// Value columns numbered breadth-first (not depth-first) must keep their
	// ids: table.NewMetadataWithUUID would renumber them.
	sc := iceberg.NewSchema(0,
		earthquakesSchema().Field(0),
		iceberg.NestedField{ID: 11, Name: "geo", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 13, Name: "lat", Type: iceberg.PrimitiveTypes.Float64},
			{ID: 14, Name: "lon", Type: iceberg.PrimitiveTypes.Float64},
		}}},
		iceberg.NestedField{ID: 12, Name: "mag", Type: iceberg.PrimitiveTypes.Float64},
	)
	_, meta, err := icebergmeta.NewTable(sc, location, tableUUID, nil)
	require.NoError(t, err)
	md, err := table.ParseMetadataBytes(meta)
	require.NoError(t, err)
	got := md.CurrentSchema()
	for _, name := range []string{"geo", "geo.lat", "geo.lon", "mag", "_kafka.partition"} {
		want, ok := sc.FindFieldByName(name)
		require.True(t, ok)
		f, ok := got.FindFieldByName(name)
		require.True(t, ok, name)
		require.Equal(t, want.ID, f.ID, name)
	}
	require.Equal(t, 14, md.LastColumnID())
	require.Equal(t, 0, sc.ID, "the caller's schema is not modified")
}

func TestNewTableRejects(t *testing.T) {
	noKafka := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "value", Type: iceberg.PrimitiveTypes.Binary})
	_, _, err := icebergmeta.NewTable(noKafka, location, tableUUID, nil)
	require.ErrorIs(t, err, icebergmeta.ErrInvalidSchema)

	wrongType := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "_kafka", Required: true,
		Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 2, Name: "partition", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		}}})
	_, err = icebergmeta.PartitionSpec(wrongType)
	require.ErrorIs(t, err, icebergmeta.ErrInvalidSchema)

	_, _, err = icebergmeta.NewTable(earthquakesSchema(), location, tableUUID, map[string]string{"format-version": "1"})
	require.Error(t, err)
	_, _, err = icebergmeta.NewTable(earthquakesSchema(), "", tableUUID, nil)
	require.Error(t, err)
	_, _, err = icebergmeta.NewTable(earthquakesSchema(), location, uuid.Nil, nil)
	require.Error(t, err)
}

func TestAppendRejects(t *testing.T) {
	s := newStore()
	metaLoc, meta, err := icebergmeta.NewTable(earthquakesSchema(), location, tableUUID, nil)
	require.NoError(t, err)
	t0 := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	now := time.Now()
	f := rangeFile(0, 0, 10, t0, 1, 2)
	in := icebergmeta.AppendInput{Metadata: meta, MetadataLocation: metaLoc, SnapshotID: 7, Now: now, Read: s.read}

	_, err = icebergmeta.Append(context.Background(), in)
	require.ErrorIs(t, err, icebergmeta.ErrNoFiles)

	dup := in
	dup.Added = []icebergmeta.AddedFile{f, f}
	_, err = icebergmeta.Append(context.Background(), dup)
	require.ErrorContains(t, err, "added twice")

	badLoc := in
	badLoc.Added = []icebergmeta.AddedFile{f}
	badLoc.MetadataLocation = location + "/metadata/v1.metadata.json"
	_, err = icebergmeta.Append(context.Background(), badLoc)
	require.Error(t, err)

	zeroID := in
	zeroID.Added = []icebergmeta.AddedFile{f}
	zeroID.SnapshotID = 0
	_, err = icebergmeta.Append(context.Background(), zeroID)
	require.Error(t, err)

	r := s.commit(t, metaLoc, meta, 7, now, f)
	again := icebergmeta.AppendInput{Metadata: r.Metadata, MetadataLocation: r.MetadataLocation,
		SnapshotID: 7, Now: now, Read: s.read, Added: []icebergmeta.AddedFile{rangeFile(0, 10, 20, t0, 1, 2)}}
	_, err = icebergmeta.Append(context.Background(), again)
	require.ErrorContains(t, err, "already in the table")
}

// TestAppendClockBehind: a writer whose clock is behind the last commit's
// keeps the last timestamp (+1 ms: they strictly increase) rather than
// produce metadata iceberg-go rejects.
func TestAppendClockBehind(t *testing.T) {
	s := newStore()
	metaLoc, meta, err := icebergmeta.NewTable(earthquakesSchema(), location, tableUUID, nil)
	require.NoError(t, err)
	t0 := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	now := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	r1 := s.commit(t, metaLoc, meta, 1, now, rangeFile(0, 0, 10, t0, 1, 2))
	r2 := s.commit(t, r1.MetadataLocation, r1.Metadata, 2, now.Add(-10*time.Minute), rangeFile(0, 10, 20, t0, 1, 2))
	md, err := table.ParseMetadataBytes(r2.Metadata)
	require.NoError(t, err)
	require.Equal(t, now.UnixMilli()+1, md.SnapshotByID(2).TimestampMs, "the last one + 1 ms")
	require.Equal(t, now.UnixMilli()+1, md.LastUpdatedMillis())
}

// TestAppendDeterministicMetadata: the same commit (same CommitUUID) gives
// the same locations and metadata JSON.
func TestAppendDeterministicMetadata(t *testing.T) {
	s := newStore()
	metaLoc, meta, err := icebergmeta.NewTable(earthquakesSchema(), location, tableUUID, nil)
	require.NoError(t, err)
	t0 := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	in := icebergmeta.AppendInput{Metadata: meta, MetadataLocation: metaLoc, SnapshotID: 42,
		Now: time.Now(), Read: s.read, CommitUUID: uuid.MustParse("0d5e1f3a-2b4c-4d6e-8f70-9a1b2c3d4e5f"),
		Added: []icebergmeta.AddedFile{rangeFile(3, 0, 10, t0, 1, 2)}}
	a, err := icebergmeta.Append(context.Background(), in)
	require.NoError(t, err)
	b, err := icebergmeta.Append(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, location+"/metadata/00001-0d5e1f3a-2b4c-4d6e-8f70-9a1b2c3d4e5f.metadata.json", a.MetadataLocation)
	require.Equal(t, location+"/metadata/snap-42-1-0d5e1f3a-2b4c-4d6e-8f70-9a1b2c3d4e5f.avro", a.ManifestList)
	require.Equal(t, location+"/metadata/0d5e1f3a-2b4c-4d6e-8f70-9a1b2c3d4e5f-m0.avro", a.Files[0].Location)
	require.Equal(t, a.MetadataLocation, b.MetadataLocation)
	require.JSONEq(t, string(a.Metadata), string(b.Metadata))
	require.Equal(t, a.Metadata, b.Metadata)
}

// TestNewTableBoundsMetadataLog: a new table's metadata-log keeps 10
// previous files unless the definition says otherwise, and the caller's
// properties are not modified.
func TestNewTableBoundsMetadataLog(t *testing.T) {
	_, meta, err := icebergmeta.NewTable(earthquakesSchema(), location, tableUUID, nil)
	require.NoError(t, err)
	md, err := table.ParseMetadataBytes(meta)
	require.NoError(t, err)
	require.Equal(t, "10", md.Properties()["write.metadata.previous-versions-max"])

	props := map[string]string{"write.metadata.previous-versions-max": "3"}
	_, meta, err = icebergmeta.NewTable(earthquakesSchema(), location, tableUUID, props)
	require.NoError(t, err)
	md, err = table.ParseMetadataBytes(meta)
	require.NoError(t, err)
	require.Equal(t, "3", md.Properties()["write.metadata.previous-versions-max"])
	require.Len(t, props, 1)

	// Twelve commits later the log names the 10 newest previous files.
	s := newStore()
	loc, meta := s.newTable(t, nil)
	res := &icebergmeta.CommitResult{MetadataLocation: loc, Metadata: meta}
	now := time.Now().Truncate(time.Millisecond)
	for id := int64(1); id <= 12; id++ {
		res = s.commit(t, res.MetadataLocation, res.Metadata, id, now.Add(time.Duration(id)*time.Millisecond),
			rangeFile(0, id*10, id*10+10, now, 0.1, 5))
	}
	md, err = table.ParseMetadataBytes(res.Metadata)
	require.NoError(t, err)
	n := 0
	for range md.PreviousFiles() {
		n++
	}
	require.Equal(t, 10, n)
}

// TestCommitOnParsedMetadata: a commit given the current metadata already
// parsed (AppendInput.Parsed, as CommitResult.Parsed hands it to the next
// commit) writes the same metadata JSON, byte for byte, as one that parses
// it, over a chain of appends and a replace.
func TestCommitOnParsedMetadata(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	// Past NewTable's last-updated-ms (the wall clock), which a commit
	// never stamps below.
	now := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	loc, meta, err := icebergmeta.NewTable(earthquakesSchema(), location, tableUUID, nil)
	require.NoError(t, err)
	run := func(useParsed bool) [][]byte {
		s := newStore()
		s.put(loc, meta)
		res := &icebergmeta.CommitResult{MetadataLocation: loc, Metadata: meta}
		var out [][]byte
		var files []icebergmeta.AddedFile
		for id := int64(1); id <= 20; id++ {
			f := rangeFile(int32(id%3), id*10, id*10+10, t0, 0.1, 5)
			files = append(files, f)
			in := icebergmeta.AppendInput{Metadata: res.Metadata, MetadataLocation: res.MetadataLocation,
				Added: []icebergmeta.AddedFile{f}, SnapshotID: id, Now: now.Add(time.Duration(id) * time.Millisecond),
				Read: s.read, CommitUUID: uuid.NewSHA1(uuid.Nil, []byte{byte(id)})}
			if useParsed {
				in.Parsed = res.Parsed
			}
			var err error
			res, err = icebergmeta.Append(context.Background(), in)
			require.NoError(t, err)
			for _, f := range res.Files {
				s.put(f.Location, f.Content)
			}
			s.put(res.MetadataLocation, res.Metadata)
			out = append(out, res.Metadata)
		}
		in := icebergmeta.RewriteInput{Metadata: res.Metadata, MetadataLocation: res.MetadataLocation,
			Removed: []string{files[0].Path, files[3].Path}, Added: []icebergmeta.AddedFile{rangeFile(1, 10, 20, t0, 0.1, 5), rangeFile(1, 40, 50, t0, 0.1, 5)},
			Replace: true, SnapshotID: 99, Now: now.Add(time.Second), Read: s.read, CommitUUID: uuid.NewSHA1(uuid.Nil, []byte{99})}
		if useParsed {
			in.Parsed = res.Parsed
		}
		r, err := icebergmeta.Rewrite(context.Background(), in)
		require.NoError(t, err)
		return append(out, r.Metadata)
	}
	require.Equal(t, run(false), run(true))
}

// A commit's metadata JSON is exactly what json.Marshal writes for its
// metadata (the commit skips json.Marshal's last copy-and-validate pass).
func TestCommitMetadataIsJSONMarshal(t *testing.T) {
	s := newStore()
	loc, meta := s.newTable(t, map[string]string{"note": "<&> escaped as json.Marshal does"})
	t0 := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	now := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	res := &icebergmeta.CommitResult{MetadataLocation: loc, Metadata: meta}
	for id := int64(1); id <= 5; id++ {
		res = s.commit(t, res.MetadataLocation, res.Metadata, id, now.Add(time.Duration(id)*time.Millisecond),
			rangeFile(int32(id%2), id*10, id*10+10, t0, 0.1, 5))
	}
	want, err := json.Marshal(res.Parsed)
	require.NoError(t, err)
	require.Equal(t, string(want), string(res.Metadata))
	require.Contains(t, string(res.Metadata), `\u003c\u0026\u003e`)
}
