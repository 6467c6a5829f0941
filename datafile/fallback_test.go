package datafile_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/datafile"
)

// TestDictionaryFallbackIsDeterministic: a column whose dictionary pays on
// the first page and then outgrows the dictionary page limit has data
// pages of two encodings (RLE_DICTIONARY, then PLAIN). arrow-go lists them
// in the footer's encoding_stats in Go map order; the encoder must still
// write the same bytes on every build (it found a 32 MiB range rebuilt
// with a different checksum).
func TestDictionaryFallbackIsDeterministic(t *testing.T) {
	var recs []*kgo.Record
	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 12000; i++ {
		v := i % 500 // repeats: the dictionary pays on the first page
		if i >= 4000 {
			v = i // then distinct values grow it past the limit
		}
		recs = append(recs, &kgo.Record{Partition: 0, Offset: int64(i), Timestamp: t0,
			Value: []byte(fmt.Sprintf("%0256d", v))})
	}
	sp := spec(t, codec.Raw, codec.String, "")
	var first [32]byte
	for i := 0; i < 24; i++ {
		res, err := datafile.Build(sp, recs)
		require.NoError(t, err)
		sum := sha256.Sum256(res.Data.Bytes)
		if i == 0 {
			first = sum
			require.Equal(t, sum[:], res.Data.SHA256[:])
			pr, err := file.NewParquetReader(bytes.NewReader(res.Data.Bytes))
			require.NoError(t, err)
			rg := pr.MetaData().RowGroup(0)
			cc, err := rg.ColumnChunk(rg.NumColumns() - 1)
			require.NoError(t, err)
			require.Equal(t, "value", cc.PathInSchema().String())
			data := map[parquet.Encoding]bool{}
			for _, es := range cc.EncodingStats() {
				if es.PageType == 0 { // DATA_PAGE
					data[es.Encoding] = true
				}
			}
			require.Equal(t, map[parquet.Encoding]bool{parquet.Encodings.RLEDict: true, parquet.Encodings.Plain: true}, data,
				"the value column fell back from its dictionary part way")
			continue
		}
		require.Equal(t, first, sum, "build %d", i)
	}
}
