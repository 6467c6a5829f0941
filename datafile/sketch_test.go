package datafile_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/datasketches-go/theta"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/datafile"
)

// offsetRecords are n raw records at offsets 0..n-1.
func offsetRecords(n int) []*kgo.Record {
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Partition: 0, Offset: int64(i), Timestamp: time.UnixMilli(1700000000000),
			Key: []byte("k"), Value: fmt.Appendf(nil, "v%d", i%10)}
	}
	return recs
}

// TestSketchGoldenVectors pins the seed, lgK, hashing of Iceberg's
// single-value serialization and the sketch format against the byte
// vectors DataSketches publishes (datasketches-go v0.2.0
// serialization_test_data, made by datasketches-java and -cpp: an update
// sketch with the defaults, updated with the longs 0..n-1, compacted
// ordered). A long's Iceberg serialization (8 bytes little-endian) hashes as
// Java's update(long) does, so the sketch of _kafka.offset over offsets
// 0..n-1 must equal those bytes: exact mode (n 1000) and estimation mode (n
// 100000), uncompressed (serial version 3, what Puffin blobs hold) and
// compressed (serial version 4, what Postgres keeps).
func TestSketchGoldenVectors(t *testing.T) {
	s := spec(t, codec.String, codec.Raw, "")
	for _, n := range []int{1000, 100000} {
		res, err := datafile.Build(s, offsetRecords(n))
		require.NoError(t, err)
		stored := res.Data.Sketches[codec.OffsetFieldID]
		require.NotEmpty(t, stored)
		sk, err := theta.Decode(stored, datafile.SketchSeed)
		require.NoError(t, err)
		var plain bytes.Buffer
		enc := theta.NewEncoder(&plain, false)
		require.NoError(t, enc.Encode(sk))
		for _, lang := range []string{"java", "cpp"} {
			want, err := os.ReadFile(filepath.Join("testdata", "theta", fmt.Sprintf("theta_n%d_%s.sk", n, lang)))
			require.NoError(t, err)
			require.Equal(t, want, plain.Bytes(), "n %d, %s", n, lang)
			if n == 100000 {
				want, err := os.ReadFile(filepath.Join("testdata", "theta", fmt.Sprintf("theta_compressed_n%d_%s.sk", n, lang)))
				require.NoError(t, err)
				require.Equal(t, want, stored, "compressed n %d, %s", n, lang)
			}
		}
		// The other columns: one partition, one timestamp, one key, ten
		// values.
		for id, want := range map[int]float64{codec.PartitionFieldID: 1, codec.TimestampFieldID: 1, codec.KeyFieldID: 1, codec.TimestampTypeFieldID: 1} {
			sk, err := theta.Decode(res.Data.Sketches[id], datafile.SketchSeed)
			require.NoError(t, err)
			require.Equal(t, want, sk.Estimate(), "field %d", id)
		}
	}
}
