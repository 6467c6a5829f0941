package datafile

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// CreatedBy is the Parquet footer's created_by of every file this encoder
// version writes: "mink encoder version <EncoderVersion>.0.0" (a test keeps
// the two in step). It is pinned because arrow-go's default names the
// library version, which would change the bytes on an upgrade. Its shape is
// the one readers parse, "<application> version <semver> [(build <b>)]"
// (parquet-java's VersionParser, arrow's ApplicationVersion): parquet-java
// ignores the footer's binary column statistics of a file whose created_by
// it cannot parse (CorruptStatistics.shouldIgnoreStatistics), as it did
// for encoder 2's "mink encoder 2".
const CreatedBy = "mink encoder version 3.0.0"

// Pinned Parquet writer settings. Every setting that shapes the bytes is
// set here explicitly rather than left to arrow-go's defaults, so that a
// library upgrade cannot change them silently. Changing any of them
// changes output bytes: bump EncoderVersion.
const (
	// dataPageSize is the target size of a data page, in bytes.
	dataPageSize = 1 << 20
	// dictPageSizeLimit is the dictionary size, in bytes, past which a
	// column chunk falls back to plain encoding.
	dictPageSizeLimit = 1 << 20
	// maxRowGroupRows is the most rows in one row group.
	maxRowGroupRows = 1 << 20
	// writeBatchSize is the number of values the column writers take at a
	// time; page boundaries are checked between batches.
	writeBatchSize = 1024
	// maxStatsSize is the largest min/max statistic, in bytes, kept in the
	// footer.
	maxStatsSize = 4096
)

// WriterProperties returns the pinned Parquet writer settings of this
// encoder version for a file of Arrow schema sc, and ArrowWriterProperties
// the pinned Arrow side. Exported so that benchmarks can encode the same
// rows with the same settings (the bare encode reference); Build is the
// only way to make a data file.
func WriterProperties(mem memory.Allocator, sc *arrow.Schema) (*parquet.WriterProperties, error) {
	base := baseWriterProperties(mem)
	// Cost-based dictionary fallback on every leaf column (parquet-mr's
	// rule, which iceberg-go applies too): before the first data page is
	// cut, a column whose dictionary plus indices are not smaller than its
	// plain values drops the dictionary. Mostly-distinct columns (ids,
	// raw values) then skip building a dictionary they would throw away.
	pq, err := pqarrow.ToParquet(sc, parquet.NewWriterProperties(base...), ArrowWriterProperties(mem))
	if err != nil {
		return nil, err
	}
	for i := range pq.NumColumns() {
		base = append(base, parquet.WithDictionaryCostFallbackFor(pq.Column(i).Path(), true))
	}
	return parquet.NewWriterProperties(base...), nil
}

func baseWriterProperties(mem memory.Allocator) []parquet.WriterProperty {
	return []parquet.WriterProperty{
		parquet.WithAllocator(mem),
		parquet.WithVersion(parquet.V2_6),
		parquet.WithDataPageVersion(parquet.DataPageV1),
		parquet.WithCreatedBy(CreatedBy),
		parquet.WithRootName("schema"),
		parquet.WithRootRepetition(parquet.Repetitions.Repeated),
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithCompressionLevel(compress.DefaultCompressionLevel),
		parquet.WithDictionaryDefault(true),
		parquet.WithDictionaryPageSizeLimit(dictPageSizeLimit),
		// The fallback encoding when a dictionary grows too large or does
		// not pay (see WriterProperties).
		parquet.WithEncoding(parquet.Encodings.Plain),
		parquet.WithDataPageSize(dataPageSize),
		parquet.WithMaxRowGroupLength(maxRowGroupRows),
		parquet.WithBatchSize(writeBatchSize),
		parquet.WithStats(true),
		parquet.WithMaxStatsSize(maxStatsSize),
		parquet.WithPageIndexEnabled(false),
		parquet.WithBloomFilterEnabled(false),
		parquet.WithStoreDecimalAsInteger(false),
	}
}

// ArrowWriterProperties: no Arrow schema in the footer (ARROW:schema would
// tie the bytes to arrow-go's IPC serialization), no timestamp coercion
// (columns are already microseconds), no INT96.
func ArrowWriterProperties(mem memory.Allocator) pqarrow.ArrowWriterProperties {
	return pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem))
}

// outBuffers holds the buffers writeParquet encodes into (*bytes.Buffer).
var outBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledOut is the largest buffer capacity put back into outBuffers, in
// bytes: a range of the default size encodes to less; an outsized one is
// left to the collector.
const maxPooledOut = 64 << 20

// writeParquet encodes rec as one Parquet file and returns its bytes and
// its footer, read back from the bytes.
func writeParquet(mem memory.Allocator, rec arrow.RecordBatch) ([]byte, *metadata.FileMetaData, error) {
	// The file grows in a pooled buffer and is copied out at its exact
	// size: growing a fresh buffer by doubling made about twice the file
	// in garbage per build, and an oversized result would be kept as long
	// as the file (the cache holds built files).
	buf := outBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledOut {
			buf.Reset()
			outBuffers.Put(buf)
		}
	}()
	props, err := WriterProperties(mem, rec.Schema())
	if err != nil {
		return nil, nil, fmt.Errorf("datafile: parquet writer: %w", err)
	}
	w, err := pqarrow.NewFileWriter(rec.Schema(), buf, props, ArrowWriterProperties(mem))
	if err != nil {
		return nil, nil, fmt.Errorf("datafile: parquet writer: %w", err)
	}
	if err := w.Write(rec); err != nil {
		_ = w.Close()
		return nil, nil, fmt.Errorf("datafile: write parquet: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, nil, fmt.Errorf("datafile: close parquet: %w", err)
	}
	b := bytes.Clone(buf.Bytes())
	r, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		return nil, nil, fmt.Errorf("datafile: read back parquet footer: %w", err)
	}
	meta := r.MetaData()
	if err := r.Close(); err != nil {
		return nil, nil, fmt.Errorf("datafile: read back parquet footer: %w", err)
	}
	if b, err = canonicalFooter(b, meta); err != nil {
		return nil, nil, fmt.Errorf("datafile: parquet footer: %w", err)
	}
	return b, meta, nil
}

// canonicalFooter puts each column chunk's encoding_stats in one order
// (dictionary page entries first, as written, then data page entries, each
// group by encoding) and rewrites the footer of b when that changed it.
// arrow-go fills encoding_stats from Go maps, so a chunk whose data pages
// use two encodings (a dictionary that fell back to plain part way) came
// out in either order: the same records gave two different files. Chunks
// with one encoding per page type are already in this order, so their
// bytes do not change.
// pageTypeDictionary is PageType.DICTIONARY_PAGE of parquet.thrift (arrow-go
// keeps its thrift types internal).
const pageTypeDictionary = 2

func canonicalFooter(b []byte, meta *metadata.FileMetaData) ([]byte, error) {
	changed := false
	for _, rg := range meta.RowGroups {
		for _, cc := range rg.Columns {
			if cc.MetaData == nil {
				continue
			}
			es := cc.MetaData.EncodingStats
			less := func(i, j int) bool {
				di, dj := es[i].PageType == pageTypeDictionary, es[j].PageType == pageTypeDictionary
				if di != dj {
					return di
				}
				if es[i].PageType != es[j].PageType {
					return es[i].PageType < es[j].PageType
				}
				return es[i].Encoding < es[j].Encoding
			}
			if !sort.SliceIsSorted(es, less) {
				sort.SliceStable(es, less)
				changed = true
			}
		}
	}
	if !changed {
		return b, nil
	}
	footer, err := meta.Serialize(context.Background())
	if err != nil {
		return nil, err
	}
	old := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	out := append(b[:len(b)-8-old:len(b)-8-old], footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...), nil
}
