package datafile_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/datafile"
)

// testRecord is one line of testdata/*.jsonl: a Kafka record. key and value
// are UTF-8 text, or key_base64 / value_base64 for arbitrary bytes; absent
// or null means a null key / value.
type testRecord struct {
	Partition     int32   `json:"partition"`
	Offset        int64   `json:"offset"`
	TimestampMs   int64   `json:"timestamp_ms"`
	TimestampType int8    `json:"timestamp_type"`
	Key           *string `json:"key"`
	KeyBase64     *string `json:"key_base64"`
	Value         *string `json:"value"`
	ValueBase64   *string `json:"value_base64"`
	Headers       []struct {
		Key   string  `json:"key"`
		Value *string `json:"value"`
	} `json:"headers"`
}

func bytesOf(t testing.TB, s, b64 *string) []byte {
	switch {
	case b64 != nil:
		b, err := base64.StdEncoding.DecodeString(*b64)
		require.NoError(t, err)
		return b
	case s != nil:
		return []byte(*s)
	}
	return nil
}

func loadRecords(t testing.TB, name string) []*kgo.Record {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	defer f.Close()
	var out []*kgo.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var tr testRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &tr))
		r := &kgo.Record{
			Topic:     "t",
			Partition: tr.Partition,
			Offset:    tr.Offset,
			Timestamp: time.UnixMilli(tr.TimestampMs),
			Attrs:     kgo.NewRecordAttrs(kgo.RecordAttrsOpts{TimestampType: tr.TimestampType}),
			Key:       bytesOf(t, tr.Key, tr.KeyBase64),
			Value:     bytesOf(t, tr.Value, tr.ValueBase64),
		}
		for _, h := range tr.Headers {
			var v []byte
			if h.Value != nil {
				v = []byte(*h.Value)
			}
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: h.Key, Value: v})
		}
		out = append(out, r)
	}
	require.NoError(t, sc.Err())
	return out
}

func spec(t testing.TB, key, value codec.Format, schemaFile string) *datafile.Spec {
	t.Helper()
	return specWith(t, key, value, schemaFile, nil)
}

// specWith is spec for a table with properties (the json decoder options).
func specWith(t testing.TB, key, value codec.Format, schemaFile string, props map[string]string) *datafile.Spec {
	t.Helper()
	opts, err := codec.JSONOptionsOf(props)
	require.NoError(t, err)
	var declared *iceberg.Schema
	if schemaFile != "" {
		b, err := os.ReadFile(filepath.Join("testdata", schemaFile))
		require.NoError(t, err)
		declared = new(iceberg.Schema)
		require.NoError(t, json.Unmarshal(b, declared))
	}
	sc, err := codec.TableSchema(key, value, declared)
	require.NoError(t, err)
	return &datafile.Spec{Schema: sc, KeyFormat: key, ValueFormat: value, JSON: opts}
}

func digest(f *datafile.File) string {
	if f == nil {
		return ""
	}
	return hex.EncodeToString(f.SHA256[:])
}

// TestGoldenVectors pins the bytes of the encoder. A data file is served
// only while its rebuild matches the recorded SHA-256 (docs/design.md §4.5), so
// CHANGING THESE DIGESTS REQUIRES BUMPING datafile.EncoderVersion: the
// files already recorded by the old version must keep their old path.
func TestGoldenVectors(t *testing.T) {
	ci := map[string]string{codec.PropFieldMatching: string(codec.MatchCaseInsensitive)}
	dl := map[string]string{codec.PropUnknownFields: string(codec.UnknownDeadLetter)}
	cases := []struct {
		name             string
		key, value       codec.Format
		schema, records  string
		data, dlq        string
		dataRows, dlqRow int64
		props            map[string]string
	}{
		{"raw", codec.Raw, codec.Raw, "", "raw.jsonl",
			"b2d45867eb178e1a852e82bb6bc54ca97f7f0b9af679929a8fd7b8b74be4090e",
			"", 4, 0, nil},
		{"string", codec.String, codec.String, "", "string.jsonl",
			"1ac0a52af39cd8b2a6576bcf3735f3d24344a2fb3dd317dc5e0b55f26eb172f5",
			"2804232f7502d615f465cd23072d0645d9f849afcae9e7b3580b71ff5d24f9aa",
			3, 1, nil},
		{"json", codec.String, codec.JSON, "json_schema.json", "json.jsonl",
			"67818d779f23592d7c918e8aad729906ddc3ca341cd2c46873edf872fa901241",
			"195506025197aad614101fa9ab016d8ddecc468ac3a8c3c3e96304acdae718a4",
			3, 3, nil},
		// Encoder version 2: numbers and booleans into string columns,
		// duplicate keys, objects whose keys all miss, floats that round to
		// zero, and the two table properties of the json decoder.
		{"json fields exact", codec.String, codec.JSON, "json_fields_schema.json", "json_fields.jsonl",
			"17803d9d35b65ee7a213d8669a29e612be2e4581028e68f66555dd2d66a1e6a2",
			"38e6e5461c1cbfc090384c1e03d7f369b07cd4918a54373febf39ac54771832f",
			6, 5, nil},
		{"json fields case-insensitive", codec.String, codec.JSON, "json_fields_schema.json", "json_fields.jsonl",
			"05d9ab1226345f68574abb84f7d12d234ff24f88f2029d0d5c6b5dc68b0d9020",
			"5f3cae31710f3c601eae4d8c07a4cf37f4ce1cc6f47a88228665189cfe0d07a4",
			7, 4, ci},
		{"json fields unknown dead-letter", codec.String, codec.JSON, "json_fields_schema.json", "json_fields.jsonl",
			"7338844dd0852de7278baf279d3046de4ffb384ddeb8a6b479f6f32b67c8e285",
			"63482a500f65178e75d7d7a602a002194e03ef6ccef6c29cb8f84d34fb0496bf",
			3, 8, dl},
		{"timestamps", codec.Raw, codec.Raw, "", "timestamps.jsonl",
			"a8e990f46659b0cc364cae1d9ea5c0db6c3a87a97b836870c02e39b1e80c0a1d",
			"19bbd8b6c12fbe1238b4baf4cfb221b75e020fe82ddd50815b57da236f9a5a7b",
			8, 2, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := specWith(t, c.key, c.value, c.schema, c.props)
			recs := loadRecords(t, c.records)
			a, err := datafile.Build(s, recs)
			require.NoError(t, err)
			b, err := datafile.Build(s, recs)
			require.NoError(t, err)
			require.Equal(t, a.Data, b.Data, "same input, same bytes")
			require.Equal(t, a.DLQ, b.DLQ, "same input, same bytes")
			t.Logf("data %s dlq %s", digest(a.Data), digest(a.DLQ))
			require.Equal(t, c.data, digest(a.Data), "data digest (bump EncoderVersion if this changes)")
			require.Equal(t, c.dlq, digest(a.DLQ), "dlq digest (bump EncoderVersion if this changes)")
			if c.dataRows > 0 {
				require.Equal(t, c.dataRows, a.Data.Stats.RecordCount)
			}
			if c.dlqRow > 0 {
				require.Equal(t, c.dlqRow, a.DLQ.Stats.RecordCount)
			}
		})
	}
}

// readBack opens a produced file with arrow-go's pqarrow reader.
func readBack(t *testing.T, f *datafile.File) (arrow.Table, *file.Reader) {
	t.Helper()
	pr, err := file.NewParquetReader(bytes.NewReader(f.Bytes))
	require.NoError(t, err)
	t.Cleanup(func() { pr.Close() })
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	tbl, err := fr.ReadTable(context.Background())
	require.NoError(t, err)
	t.Cleanup(tbl.Release)
	return tbl, pr
}

func column(t *testing.T, tbl arrow.Table, i int) arrow.Array {
	t.Helper()
	ch := tbl.Column(i).Data()
	require.Len(t, ch.Chunks(), 1)
	return ch.Chunk(0)
}

func leU64(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) }

func TestReadBackRaw(t *testing.T) {
	recs := loadRecords(t, "raw.jsonl")
	res, err := datafile.Build(spec(t, codec.Raw, codec.Raw, ""), recs)
	require.NoError(t, err)
	require.Nil(t, res.DLQ)
	require.NotNil(t, res.Data)
	tbl, pr := readBack(t, res.Data)
	require.EqualValues(t, 4, tbl.NumRows())

	// Field ids are in the Parquet schema.
	ids := map[string]int32{}
	sch := pr.MetaData().Schema
	for i := 0; i < sch.NumColumns(); i++ {
		ids[sch.Column(i).Path()] = sch.Column(i).SchemaNode().FieldID()
	}
	require.Equal(t, map[string]int32{
		"_kafka.partition": 2, "_kafka.offset": 3, "_kafka.timestamp": 4, "_kafka.timestamp_type": 5,
		"_kafka.key": 6, "_kafka.headers.list.element.key": 9, "_kafka.headers.list.element.value": 10,
		"value": 11,
	}, ids)
	require.Equal(t, datafile.CreatedBy, pr.MetaData().GetCreatedBy())
	require.Equal(t, fmt.Sprintf("mink encoder version %d.0.0", datafile.EncoderVersion), datafile.CreatedBy)
	// Readers parse it: arrow's ApplicationVersion, and parquet-java's
	// VersionParser (its FORMAT, copied), which otherwise ignores binary
	// statistics.
	av := metadata.NewAppVersion(datafile.CreatedBy)
	require.Equal(t, "mink encoder", av.App)
	require.Equal(t, datafile.EncoderVersion, av.Version.Major)
	m := regexp.MustCompile(`^(.*?)\s+version\s*(?:([^(]*?)\s*(?:\(\s*build\s*([^)]*?)\s*\))?)?$`).FindStringSubmatch(datafile.CreatedBy)
	require.Equal(t, []string{datafile.CreatedBy, "mink encoder", fmt.Sprintf("%d.0.0", datafile.EncoderVersion), ""}, m)

	k := column(t, tbl, 0).(*array.Struct)
	part := k.Field(0).(*array.Int32)
	off := k.Field(1).(*array.Int64)
	ts := k.Field(2).(*array.Timestamp)
	tt := k.Field(3).(*array.Int32)
	key := k.Field(4).(*array.Binary)
	hdrs := k.Field(5).(*array.List)
	for i, r := range recs {
		require.Equal(t, r.Partition, part.Value(i))
		require.Equal(t, r.Offset, off.Value(i))
		require.Equal(t, arrow.Timestamp(r.Timestamp.UnixMilli()*1000), ts.Value(i))
		require.Equal(t, int32(r.Attrs.TimestampType()), tt.Value(i))
		if r.Key == nil {
			require.True(t, key.IsNull(i))
		} else {
			require.Equal(t, r.Key, key.Value(i))
		}
	}
	require.Equal(t, "UTC", ts.DataType().(*arrow.TimestampType).TimeZone)
	require.Equal(t, arrow.Microsecond, ts.DataType().(*arrow.TimestampType).Unit)

	// Headers keep order and duplicates.
	start, end := hdrs.ValueOffsets(0)
	require.EqualValues(t, 3, end-start)
	hs := hdrs.ListValues().(*array.Struct)
	hk, hv := hs.Field(0).(*array.String), hs.Field(1).(*array.Binary)
	require.Equal(t, []string{"trace", "trace", "empty"}, []string{hk.Value(0), hk.Value(1), hk.Value(2)})
	require.Equal(t, "abc", string(hv.Value(0)))
	require.Equal(t, "def", string(hv.Value(1)))
	require.True(t, hv.IsNull(2))
	s1, e1 := hdrs.ValueOffsets(1)
	require.Equal(t, s1, e1) // no headers: empty list
	require.False(t, hdrs.IsNull(1))
	s3, _ := hdrs.ValueOffsets(3)
	require.Equal(t, "b", hk.Value(int(s3)))
	require.Equal(t, "a", hk.Value(int(s3)+1))

	val := column(t, tbl, 1).(*array.Binary)
	require.Equal(t, "hello", string(val.Value(0)))
	require.Equal(t, []byte{0, 0xff, 0x10, 0xff}, val.Value(1))
	require.True(t, val.IsNull(2))
	require.False(t, val.IsNull(3))
	require.Empty(t, val.Value(3))

	// Stats: Iceberg single-value serialization (Appendix D).
	st := res.Data.Stats
	require.EqualValues(t, 4, st.RecordCount)
	require.EqualValues(t, 100, leU64(st.LowerBounds[codec.OffsetFieldID]))
	require.EqualValues(t, 105, leU64(st.UpperBounds[codec.OffsetFieldID]))
	require.Equal(t, []byte{3, 0, 0, 0}, st.LowerBounds[codec.PartitionFieldID])
	require.Equal(t, []byte{3, 0, 0, 0}, st.UpperBounds[codec.PartitionFieldID])
	require.EqualValues(t, 1699999999000000, leU64(st.LowerBounds[codec.TimestampFieldID]))
	require.EqualValues(t, 1700000001000000, leU64(st.UpperBounds[codec.TimestampFieldID]))
	require.Equal(t, []byte("user-1"), st.LowerBounds[codec.KeyFieldID]) // binary: the bytes
	require.Equal(t, []byte{0xff}, st.UpperBounds[codec.KeyFieldID])
	require.Equal(t, []byte{0}, st.LowerBounds[codec.TimestampTypeFieldID][:1])
	require.Equal(t, []byte("hello"), st.UpperBounds[codec.FirstValueFieldID])
	require.EqualValues(t, 1, st.NullValueCounts[codec.FirstValueFieldID])
	require.EqualValues(t, 1, st.NullValueCounts[codec.KeyFieldID])
	require.EqualValues(t, 4, st.ValueCounts[codec.OffsetFieldID])
	require.Equal(t, int64(1699999999000000), st.MinTimestamp)
	require.Equal(t, int64(1700000001000000), st.MaxTimestamp)
	require.NotEmpty(t, st.ColumnSizes[codec.OffsetFieldID])
	require.Equal(t, []int64{4}, st.SplitOffsets)
	require.Equal(t, res.Data.SHA256, sha(res.Data.Bytes))
}

func TestReadBackJSON(t *testing.T) {
	recs := loadRecords(t, "json.jsonl")
	s := spec(t, codec.String, codec.JSON, "json_schema.json")
	res, err := datafile.Build(s, recs)
	require.NoError(t, err)
	require.EqualValues(t, 1, res.Unknown)
	require.Equal(t, []string{"properties.net"}, res.UnknownExamples)
	tbl, pr := readBack(t, res.Data)
	require.EqualValues(t, 3, tbl.NumRows())

	// Nested field ids, list and map included.
	ids := map[string]int32{}
	sch := pr.MetaData().Schema
	for i := 0; i < sch.NumColumns(); i++ {
		ids[sch.Column(i).Path()] = sch.Column(i).SchemaNode().FieldID()
	}
	require.EqualValues(t, 11, ids["type"])
	require.EqualValues(t, 13, ids["properties.mag"])
	require.EqualValues(t, 22, ids["geometry.coordinates.list.element"])
	require.EqualValues(t, 24, ids["tags.key_value.key"])
	require.EqualValues(t, 25, ids["tags.key_value.value"])
	require.EqualValues(t, 26, ids["id"])

	off := column(t, tbl, 0).(*array.Struct).Field(1).(*array.Int64)
	require.Equal(t, []int64{0, 1, 4}, off.Int64Values())
	key := column(t, tbl, 0).(*array.Struct).Field(4).(*array.String)
	require.Equal(t, "ci123", key.Value(0))
	require.True(t, key.IsNull(2))

	props := column(t, tbl, 2).(*array.Struct)
	mag := props.Field(0).(*array.Float64)
	require.Equal(t, []float64{2.5, 3, -0.5}, mag.Float64Values())
	tm := props.Field(2).(*array.Timestamp)
	require.Equal(t, arrow.Timestamp(1700000000000000), tm.Value(0))
	require.Equal(t, arrow.Timestamp(1700000000400000), tm.Value(2))
	upd := props.Field(3).(*array.Timestamp)
	require.Equal(t, arrow.Timestamp(1700000005500000), upd.Value(0))
	require.True(t, upd.IsNull(1))
	felt := props.Field(4).(*array.Int32)
	require.True(t, felt.IsNull(0))
	require.Equal(t, int32(12), felt.Value(1))

	geo := column(t, tbl, 3).(*array.Struct)
	require.True(t, geo.IsNull(2))
	coords := geo.Field(1).(*array.List)
	require.Equal(t, []float64{-117.1, 35.2, 7.5, -117, 35, 0}, coords.ListValues().(*array.Float64).Float64Values())

	tags := column(t, tbl, 4).(*array.Map)
	tk := tags.Keys().(*array.String)
	tv := tags.Items().(*array.String)
	require.Equal(t, "source", tk.Value(0))
	require.Equal(t, "ci", tv.Value(0))
	require.Equal(t, "review", tk.Value(1))
	require.True(t, tags.IsNull(1))
	s2, e2 := tags.ValueOffsets(2)
	require.Equal(t, s2, e2)
	require.False(t, tags.IsNull(2))

	require.Equal(t, "ci125", column(t, tbl, 5).(*array.String).Value(2))

	st := res.Data.Stats
	require.EqualValues(t, 0, leU64(st.LowerBounds[codec.OffsetFieldID]))
	require.EqualValues(t, 4, leU64(st.UpperBounds[codec.OffsetFieldID]))
	lo := st.LowerBounds[13]
	require.Len(t, lo, 8)
	require.Equal(t, -0.5, float64frombits(lo))
	require.EqualValues(t, 0, st.NaNValueCounts[13])

	// The dead letters: raw value, reason, _kafka.
	dlq, _ := readBack(t, res.DLQ)
	require.EqualValues(t, 3, dlq.NumRows())
	doff := column(t, dlq, 0).(*array.Struct).Field(1).(*array.Int64)
	require.Equal(t, []int64{2, 3, 5}, doff.Int64Values())
	val := column(t, dlq, 1).(*array.Binary)
	require.Equal(t, recs[2].Value, val.Value(0))
	require.True(t, val.IsNull(2))
	reason := column(t, dlq, 2).(*array.String)
	require.Equal(t, `field properties.mag: cannot convert string "x" to double`, reason.Value(0))
	require.Contains(t, reason.Value(1), "invalid JSON")
	require.Contains(t, reason.Value(2), "tombstone")
	require.EqualValues(t, 3, res.DLQ.Stats.RecordCount)
	require.EqualValues(t, 2, leU64(res.DLQ.Stats.LowerBounds[codec.OffsetFieldID]))
	require.EqualValues(t, 5, leU64(res.DLQ.Stats.UpperBounds[codec.OffsetFieldID]))
	require.Equal(t, int64(1700000000200000), res.DLQ.Stats.MinTimestamp)
}

func TestStringDLQ(t *testing.T) {
	res, err := datafile.Build(spec(t, codec.String, codec.String, ""), loadRecords(t, "string.jsonl"))
	require.NoError(t, err)
	tbl, _ := readBack(t, res.Data)
	v := column(t, tbl, 1).(*array.String)
	require.Equal(t, "héllo wörld ✓", v.Value(1))
	require.True(t, v.IsNull(2))
	dlq, _ := readBack(t, res.DLQ)
	require.Equal(t, []byte("hi\xff\xff"), column(t, dlq, 1).(*array.Binary).Value(0))
	require.Equal(t, "value is not valid UTF-8", column(t, dlq, 2).(*array.String).Value(0))
}

func TestInvalidStringKeyGoesToDLQ(t *testing.T) {
	s := spec(t, codec.String, codec.Raw, "")
	recs := []*kgo.Record{
		{Partition: 0, Offset: 1, Key: []byte{0xff}, Value: []byte("v")},
		{Partition: 0, Offset: 2, Key: []byte("ok"), Value: []byte("v"), Headers: []kgo.RecordHeader{{Key: "\xff"}}},
	}
	res, err := datafile.Build(s, recs)
	require.NoError(t, err)
	require.Nil(t, res.Data)
	dlq, _ := readBack(t, res.DLQ)
	k := column(t, dlq, 0).(*array.Struct).Field(4).(*array.Binary)
	require.Equal(t, []byte{0xff}, k.Value(0), "the dead-letter key keeps its bytes")
	reason := column(t, dlq, 2).(*array.String)
	require.Equal(t, "key is not valid UTF-8", reason.Value(0))
	require.Equal(t, "header 0: key is not valid UTF-8", reason.Value(1))
}

func TestEmptyAndErrors(t *testing.T) {
	s := spec(t, codec.Raw, codec.Raw, "")
	res, err := datafile.Build(s, nil)
	require.NoError(t, err)
	require.Nil(t, res.Data)
	require.Nil(t, res.DLQ)

	_, err = datafile.Build(s, []*kgo.Record{{Offset: 2}, {Offset: 2}})
	require.ErrorContains(t, err, "offset order")
	_, err = datafile.Build(s, []*kgo.Record{{Offset: 2}, {Partition: 1, Offset: 3}})
	require.ErrorContains(t, err, "partition")
	_, err = datafile.Build(&datafile.Spec{Schema: s.Schema, KeyFormat: codec.Raw, ValueFormat: codec.String}, []*kgo.Record{{}})
	require.Error(t, err)
	_, err = datafile.Build(nil, nil)
	require.Error(t, err)
}

// The rows and dead letters of json_fields.jsonl under each decoder
// option (the golden vectors pin their bytes), and the unknown fields the
// build counts.
func TestJSONFieldsReadBack(t *testing.T) {
	recs := loadRecords(t, "json_fields.jsonl")
	type row struct {
		offset int64
		vbeln  string // "" for null
		title  string
	}
	for _, c := range []struct {
		name     string
		props    map[string]string
		rows     []row
		dlq      map[int64]string // offset → reason
		unknown  int64
		examples []string
	}{
		{"exact", nil,
			[]row{{100, "0001", "1941"}, {102, "0003", "true"}, {107, "0008", "false"}, {108, "0009", ""}, {109, "", ""}, {110, "", "-12.50E+2"}},
			map[int64]string{
				101: `no key of the object matches a column (mink.json.field-matching = exact); unknown fields: "vbeln", "aufnr"`,
				103: `field Title: key "Title" given twice for the field (mink.json.field-matching = exact)`,
				104: `field addr: no key of the object matches a field of the struct (mink.json.field-matching = exact); unknown fields: "addr.zip"`,
				105: `field mag: cannot convert number 1e-400 to double: out of range (rounds to zero)`,
				106: `field Title: cannot convert object to string`,
			},
			7, []string{"vbeln", "aufnr", "addr.city", "items.element.n", "addr.zip", "ITEMS"}},
		{"case-insensitive", map[string]string{"mink.json.field-matching": "case-insensitive"},
			[]row{{100, "0001", "1941"}, {101, "0002", ""}, {102, "0003", "true"}, {104, "0005", ""}, {107, "0008", "false"}, {109, "", ""}, {110, "", "-12.50E+2"}},
			map[int64]string{
				103: `field Title: key "Title" given twice for the field (mink.json.field-matching = case-insensitive)`,
				105: `field mag: cannot convert number 1e-400 to double: out of range (rounds to zero)`,
				106: `field Title: cannot convert object to string`,
				108: `field VBELN: key "vbeln" given twice for the field (mink.json.field-matching = case-insensitive)`,
			},
			2, []string{"addr.city", "items.element.n"}},
		{"unknown dead-letter", map[string]string{"mink.json.unknown-fields": "dead-letter"},
			[]row{{100, "0001", "1941"}, {107, "0008", "false"}, {109, "", ""}},
			map[int64]string{
				101: `no key of the object matches a column (mink.json.field-matching = exact); unknown fields: "vbeln", "aufnr"`,
				102: `unknown fields (mink.json.unknown-fields = dead-letter): "addr.city", "items.element.n"`,
				103: `field Title: key "Title" given twice for the field (mink.json.field-matching = exact)`,
				104: `field addr: no key of the object matches a field of the struct (mink.json.field-matching = exact); unknown fields: "addr.zip"`,
				105: `field mag: cannot convert number 1e-400 to double: out of range (rounds to zero)`,
				106: `field Title: cannot convert object to string`,
				108: `unknown fields (mink.json.unknown-fields = dead-letter): "vbeln"`,
				110: `unknown fields (mink.json.unknown-fields = dead-letter): "ITEMS"`,
			},
			7, []string{"vbeln", "aufnr", "addr.city", "items.element.n", "addr.zip", "ITEMS"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := datafile.Build(specWith(t, codec.String, codec.JSON, "json_fields_schema.json", c.props), recs)
			require.NoError(t, err)
			require.Equal(t, c.unknown, res.Unknown)
			require.Equal(t, c.examples, res.UnknownExamples)

			tbl, _ := readBack(t, res.Data)
			off := column(t, tbl, 0).(*array.Struct).Field(1).(*array.Int64)
			vbeln, title := column(t, tbl, 1).(*array.String), column(t, tbl, 3).(*array.String)
			var got []row
			for i := 0; i < int(tbl.NumRows()); i++ {
				r := row{offset: off.Value(i)}
				if vbeln.IsValid(i) {
					r.vbeln = vbeln.Value(i)
				}
				if title.IsValid(i) {
					r.title = title.Value(i)
				}
				got = append(got, r)
			}
			require.Equal(t, c.rows, got)

			dlq, _ := readBack(t, res.DLQ)
			doff := column(t, dlq, 0).(*array.Struct).Field(1).(*array.Int64)
			reason := column(t, dlq, 2).(*array.String)
			reasons := map[int64]string{}
			for i := 0; i < int(dlq.NumRows()); i++ {
				reasons[doff.Value(i)] = reason.Value(i)
			}
			require.Equal(t, c.dlq, reasons)
		})
	}
}

// Examples of unknown fields are distinct, at most MaxUnknownExamples, and
// fit for PostgreSQL text: no NUL or other control character, bounded
// length.
func TestUnknownExamplesBounded(t *testing.T) {
	long := strings.Repeat("é", 150) // 300 bytes
	values := []string{
		`{"VBELN":"1","a\u0000b":1,"` + long + `":2}`,
		`{"VBELN":"2","a\u0000b":1}`,
	}
	for i := range 12 {
		values = append(values, fmt.Sprintf(`{"VBELN":"3","k%d":%d}`, i, i))
	}
	var recs []*kgo.Record
	for i, v := range values {
		recs = append(recs, &kgo.Record{Offset: int64(i), Timestamp: time.UnixMilli(0), Value: []byte(v)})
	}
	res, err := datafile.Build(spec(t, codec.Raw, codec.JSON, "json_fields_schema.json"), recs)
	require.NoError(t, err)
	require.EqualValues(t, 15, res.Unknown)
	require.Len(t, res.UnknownExamples, datafile.MaxUnknownExamples)
	require.Equal(t, "a\uFFFDb", res.UnknownExamples[0])
	require.Equal(t, strings.Repeat("é", 100)+"…", res.UnknownExamples[1])
	require.Equal(t, []string{"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"}, res.UnknownExamples[2:])
}

// TestTimestamps builds records whose timestamps lie outside what int64
// nanoseconds hold (1677-09-21..2262-04-11) and at and past what Iceberg's
// int64 microseconds hold: the representable ones are stored exactly, in
// the rows, the column bounds and the file's timestamp range; the two past
// the limits become dead letters whose error names the raw value, with
// Kafka's "no timestamp" (-1 ms, type -1) in _kafka, never a wrapped or
// clamped instant.
func TestTimestamps(t *testing.T) {
	recs := loadRecords(t, "timestamps.jsonl")
	res, err := datafile.Build(spec(t, codec.Raw, codec.Raw, ""), recs)
	require.NoError(t, err)

	tbl, _ := readBack(t, res.Data)
	k := column(t, tbl, 0).(*array.Struct)
	off, ts, tt := k.Field(1).(*array.Int64), k.Field(2).(*array.Timestamp), k.Field(3).(*array.Int32)
	type row struct {
		Offset int64
		Micros int64
		Type   int32
	}
	var got []row
	for i := 0; i < ts.Len(); i++ {
		got = append(got, row{off.Value(i), int64(ts.Value(i)), tt.Value(i)})
	}
	require.Equal(t, []row{
		{0, -1000, 0}, {1, 0, 0}, {2, 9223372036854000, 0}, {3, 9223372036855000, 0},
		{4, 253402300799999000, 1}, {5, 9223372036854775000, 0}, {7, -9223372036854775000, 0},
		{9, -1000, -1},
	}, got)
	require.Equal(t, "9999-12-31T23:59:59.999Z",
		time.UnixMicro(int64(ts.Value(4))).UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	st := res.Data.Stats
	require.EqualValues(t, -9223372036854775000, leU64(st.LowerBounds[codec.TimestampFieldID]))
	require.EqualValues(t, 9223372036854775000, leU64(st.UpperBounds[codec.TimestampFieldID]))
	require.Equal(t, int64(-9223372036854775000), st.MinTimestamp)
	require.Equal(t, int64(9223372036854775000), st.MaxTimestamp)

	dtbl, _ := readBack(t, res.DLQ)
	dk := column(t, dtbl, 0).(*array.Struct)
	doff, dts, dtt := dk.Field(1).(*array.Int64), dk.Field(2).(*array.Timestamp), dk.Field(3).(*array.Int32)
	errs := column(t, dtbl, 2).(*array.String)
	require.Equal(t, []int64{6, 8}, doff.Int64Values())
	for i := 0; i < 2; i++ {
		require.EqualValues(t, -1000, dts.Value(i))
		require.EqualValues(t, -1, dtt.Value(i))
	}
	require.Equal(t, "timestamp 9223372036854776 ms (timestamp type 0) is outside what an Iceberg timestamptz holds "+
		"(int64 microseconds: -9223372036854775..9223372036854775 ms)", errs.Value(0))
	require.Equal(t, "timestamp -9223372036854776 ms (timestamp type 1) is outside what an Iceberg timestamptz holds "+
		"(int64 microseconds: -9223372036854775..9223372036854775 ms)", errs.Value(1))
	require.Equal(t, "past the largest", string(column(t, dtbl, 1).(*array.Binary).Value(0)))
	require.Equal(t, int64(-1000), res.DLQ.Stats.MinTimestamp)
	require.Equal(t, int64(-1000), res.DLQ.Stats.MaxTimestamp)
}
