package icebergmeta

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
	"github.com/twmb/avro/ocf"

	"github.com/minkhq/mink/datafile"
)

func avroTestSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: KafkaFieldID, Name: "_kafka", Required: true, Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: PartitionSourceID, Name: "partition", Type: iceberg.PrimitiveTypes.Int32, Required: true},
			{ID: 3, Name: "offset", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		}}},
		iceberg.NestedField{ID: 4, Name: "value", Type: iceberg.PrimitiveTypes.Binary},
	)
}

func avroTestFile(t *testing.T, spec iceberg.PartitionSpec, path string, p int32, n int64) iceberg.DataFile {
	t.Helper()
	df, err := dataFile(spec, AddedFile{Path: path, Partition: p, FileSize: 100 + n,
		Stats: datafile.Stats{RecordCount: n, ValueCounts: map[int]int64{3: n}}})
	require.NoError(t, err)
	return df
}

// ocfBlocks splits an object container file into its header metadata, its
// sync marker and the data of its blocks (as stored, compressed or not).
func ocfBlocks(t *testing.T, b []byte) (meta map[string][]byte, sync [16]byte, blocks [][]byte) {
	t.Helper()
	var h ocfHeaderRecord
	rest, err := ocfHeader.Decode(b, &h)
	require.NoError(t, err)
	meta = map[string][]byte{}
	for _, kv := range h.Meta {
		meta[kv.Key] = kv.Value
	}
	for len(rest) > 0 {
		_, n := binary.Varint(rest)
		require.Positive(t, n)
		size, m := binary.Varint(rest[n:])
		require.Positive(t, m)
		rest = rest[n+m:]
		blocks = append(blocks, rest[:size])
		require.Equal(t, h.Sync[:], rest[size:size+16])
		rest = rest[size+16:]
	}
	return meta, h.Sync, blocks
}

// ocfRecords decodes every record of an object container file.
func ocfRecords(t *testing.T, b []byte) []any {
	t.Helper()
	rd, err := ocf.NewReader(bytes.NewReader(b))
	require.NoError(t, err)
	defer rd.Close()
	var out []any
	for {
		var v any
		err := rd.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		out = append(out, v)
	}
}

// Manifests and manifest lists name the null codec in their header and
// hold the same metadata, sync marker and records as the deflate file
// iceberg-go writes, the blocks inflated.
func TestAvroCodecNull(t *testing.T) {
	schema := avroTestSchema()
	spec, err := PartitionSpec(schema)
	require.NoError(t, err)
	const snapshotID = 7
	var entries []iceberg.ManifestEntry
	for i := range 1000 { // several blocks (64 KiB each)
		sid := int64(snapshotID)
		entries = append(entries, iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &sid, nil, nil,
			avroTestFile(t, spec, fmt.Sprintf("s3://mink/t/data/%d/%d-%d-1.parquet", i%3, i, i+1), int32(i%3), int64(i+1))))
	}
	var deflated bytes.Buffer
	_, err = iceberg.WriteManifest("s3://mink/t/metadata/x-m0.avro", &deflated, FormatVersion, spec, schema, snapshotID, entries)
	require.NoError(t, err)
	manifest, file, err := writeManifest("s3://mink/t/metadata/x-m0.avro", spec, schema, snapshotID, entries)
	require.NoError(t, err)
	require.Equal(t, "s3://mink/t/metadata/x-m0.avro", file.Location)
	require.EqualValues(t, len(file.Content), manifest.Length())

	var deflatedList bytes.Buffer
	seq := int64(1)
	require.NoError(t, iceberg.WriteManifestList(FormatVersion, &deflatedList, snapshotID, nil, &seq, 0, []iceberg.ManifestFile{manifest}))
	list, err := writeManifestList("s3://mink/t/metadata/snap-7-1-x.avro", snapshotID, nil, seq, []iceberg.ManifestFile{manifest})
	require.NoError(t, err)

	for _, c := range []struct {
		name           string
		deflated, null []byte
	}{
		{"manifest", deflated.Bytes(), file.Content},
		{"manifest list", deflatedList.Bytes(), list.Content},
	} {
		dMeta, _, dBlocks := ocfBlocks(t, c.deflated)
		nMeta, _, nBlocks := ocfBlocks(t, c.null)
		require.Equal(t, "deflate", string(dMeta["avro.codec"]), "%s", c.name)
		require.Equal(t, "null", string(nMeta["avro.codec"]), "%s", c.name)
		delete(dMeta, "avro.codec")
		delete(nMeta, "avro.codec")
		require.Equal(t, dMeta, nMeta, "%s: metadata", c.name)
		require.Len(t, nBlocks, len(dBlocks), "%s: blocks", c.name)
		for i := range dBlocks {
			raw, err := ocf.DeflateCodec(-1).Decompress(dBlocks[i])
			require.NoError(t, err)
			require.Equal(t, raw, nBlocks[i], "%s: block %d", c.name, i)
		}
		require.Equal(t, ocfRecords(t, c.deflated), ocfRecords(t, c.null), "%s: records", c.name)

		// Rewriting a null file changes nothing.
		again, err := avroCodecNull(c.null)
		require.NoError(t, err)
		require.Equal(t, c.null, again, "%s", c.name)
	}
	_, _, blocks := ocfBlocks(t, file.Content)
	require.Greater(t, len(blocks), 1, "the manifest has several blocks")

	// iceberg-go reads both back.
	got, err := iceberg.ReadManifest(manifest, bytes.NewReader(file.Content), false)
	require.NoError(t, err)
	require.Len(t, got, len(entries))
	ms, err := iceberg.ReadManifestList(bytes.NewReader(list.Content))
	require.NoError(t, err)
	require.Len(t, ms, 1)
	require.Equal(t, manifest.Length(), ms[0].Length())
	require.EqualValues(t, len(entries), ms[0].AddedDataFiles())
}

// writeManifest keeps each entry's status, snapshot id and sequence
// numbers, and refuses an added or deleted entry of another snapshot.
func TestWriteManifestEntries(t *testing.T) {
	schema := avroTestSchema()
	spec, err := PartitionSpec(schema)
	require.NoError(t, err)
	const snapshotID = 30
	sid, older := int64(snapshotID), int64(10)
	seq5, seq2, seq3 := int64(5), int64(2), int64(3)
	entries := []iceberg.ManifestEntry{
		iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &sid, nil, nil, avroTestFile(t, spec, "s3://mink/t/data/0/a.parquet", 0, 10)),
		iceberg.NewManifestEntry(iceberg.EntryStatusEXISTING, &older, &seq2, &seq3, avroTestFile(t, spec, "s3://mink/t/data/1/b.parquet", 1, 20)),
		iceberg.NewManifestEntry(iceberg.EntryStatusDELETED, &sid, &seq5, &seq2, avroTestFile(t, spec, "s3://mink/t/data/2/c.parquet", 2, 40)),
	}
	m, file, err := writeManifest("s3://mink/t/metadata/y-m1.avro", spec, schema, snapshotID, entries)
	require.NoError(t, err)
	require.EqualValues(t, len(file.Content), m.Length())
	require.EqualValues(t, 1, m.AddedDataFiles())
	require.EqualValues(t, 1, m.ExistingDataFiles())
	require.EqualValues(t, 1, m.DeletedDataFiles())
	require.EqualValues(t, 10, m.AddedRows())
	require.EqualValues(t, 20, m.ExistingRows())
	require.EqualValues(t, 40, m.DeletedRows())
	require.EqualValues(t, snapshotID, m.SnapshotID())

	got, err := iceberg.ReadManifest(m, bytes.NewReader(file.Content), false)
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, iceberg.EntryStatusADDED, got[0].Status())
	require.EqualValues(t, snapshotID, got[0].SnapshotID())
	require.Equal(t, iceberg.EntryStatusEXISTING, got[1].Status())
	require.Equal(t, older, got[1].SnapshotID())
	require.Equal(t, seq2, got[1].SequenceNum())
	require.Equal(t, seq3, *got[1].FileSequenceNum())
	require.Equal(t, iceberg.EntryStatusDELETED, got[2].Status())
	require.EqualValues(t, snapshotID, got[2].SnapshotID())
	require.Equal(t, seq5, got[2].SequenceNum())
	require.Equal(t, seq2, *got[2].FileSequenceNum())
	for i, p := range []string{"0/a", "1/b", "2/c"} {
		require.Equal(t, "s3://mink/t/data/"+p+".parquet", got[i].DataFile().FilePath())
	}

	for _, status := range []iceberg.ManifestEntryStatus{iceberg.EntryStatusADDED, iceberg.EntryStatusDELETED} {
		e := iceberg.NewManifestEntry(status, &older, &seq2, &seq2, avroTestFile(t, spec, "s3://mink/t/data/0/d.parquet", 0, 1))
		_, _, err := writeManifest("s3://mink/t/metadata/z-m0.avro", spec, schema, snapshotID, []iceberg.ManifestEntry{e})
		require.ErrorContains(t, err, "by snapshot 10, not 30", "%v", status)
	}
}

// dataFile leaves the statistics a file's Stats lack null in the manifest,
// and keeps empty ones empty.
func TestDataFileMissingStats(t *testing.T) {
	schema := avroTestSchema()
	spec, err := PartitionSpec(schema)
	require.NoError(t, err)
	stats := map[string]datafile.Stats{
		"sparse": {RecordCount: 3, ValueCounts: map[int]int64{3: 3}},
		"empty":  {RecordCount: 3, ColumnSizes: map[int]int64{}, LowerBounds: map[int][]byte{}, SplitOffsets: []int64{}},
	}
	dataFileRecord := func(s datafile.Stats) map[string]any {
		sid := int64(1)
		df, err := dataFile(spec, AddedFile{Path: "s3://mink/t/data/0/a.parquet", FileSize: 10, Stats: s})
		require.NoError(t, err)
		_, file, err := writeManifest("s3://mink/t/metadata/x-m0.avro", spec, schema, sid,
			[]iceberg.ManifestEntry{iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &sid, nil, nil, df)})
		require.NoError(t, err)
		return ocfRecords(t, file.Content)[0].(map[string]any)["data_file"].(map[string]any)
	}

	sparse := dataFileRecord(stats["sparse"])
	require.NotNil(t, sparse["value_counts"])
	for _, k := range []string{"column_sizes", "null_value_counts", "nan_value_counts", "lower_bounds", "upper_bounds", "split_offsets"} {
		require.Nil(t, sparse[k], k)
	}
	empty := dataFileRecord(stats["empty"])
	for _, k := range []string{"column_sizes", "lower_bounds", "split_offsets"} {
		require.Equal(t, []any{}, empty[k], k)
	}
	require.Nil(t, empty["value_counts"])
}

func TestAvroCodecNullRejects(t *testing.T) {
	seq := int64(1)
	var buf bytes.Buffer
	require.NoError(t, iceberg.WriteManifestList(FormatVersion, &buf, 1, nil, &seq, 0, nil))
	empty := buf.Bytes() // header only: no manifest, no block
	out, err := avroCodecNull(empty)
	require.NoError(t, err)
	meta, _, blocks := ocfBlocks(t, out)
	require.Equal(t, "null", string(meta["avro.codec"]))
	require.Empty(t, blocks)

	schema := avroTestSchema()
	spec, err := PartitionSpec(schema)
	require.NoError(t, err)
	sid := int64(1)
	var mbuf bytes.Buffer
	_, err = iceberg.WriteManifest("m.avro", &mbuf, FormatVersion, spec, schema, 1,
		[]iceberg.ManifestEntry{iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &sid, nil, nil, avroTestFile(t, spec, "a.parquet", 0, 1))})
	require.NoError(t, err)
	good := mbuf.Bytes()

	badMagic := bytes.Clone(good)
	badMagic[3] = 2
	_, err = avroCodecNull(badMagic)
	require.ErrorContains(t, err, "magic")

	_, err = avroCodecNull(good[:len(good)-1])
	require.ErrorContains(t, err, "no sync marker")

	_, err = avroCodecNull(good[:len(good)-20])
	require.ErrorContains(t, err, "bad size")

	badSync := bytes.Clone(good)
	badSync[len(badSync)-1] ^= 0xff
	_, err = avroCodecNull(badSync)
	require.ErrorContains(t, err, "no sync marker")

	var snappy bytes.Buffer
	w, err := ocf.NewWriter(&snappy, ocfHeader, ocf.WithCodec(ocf.SnappyCodec()))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	_, err = avroCodecNull(snappy.Bytes())
	require.ErrorContains(t, err, `codec "snappy"`)
}
