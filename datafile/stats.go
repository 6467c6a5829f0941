package datafile

import (
	"fmt"
	"maps"

	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/minkhq/mink/codec"
)

// PartitionFieldID is the partition field id of every Mink table's
// partition spec (docs/design.md §4.2: identity on _kafka.partition).
const PartitionFieldID = 1000

// PartitionSpec returns the partition spec of every Mink table and of its
// dead-letter table: spec id 0, field 1000 "_kafka_partition", identity on
// source field 2 (_kafka.partition).
func PartitionSpec() iceberg.PartitionSpec {
	return iceberg.NewPartitionSpecID(0, iceberg.PartitionField{
		SourceIDs: []int{codec.PartitionFieldID},
		FieldID:   PartitionFieldID,
		Name:      "_kafka_partition",
		Transform: iceberg.IdentityTransform{},
	})
}

// statsPath stands in for the object path, which iceberg-go requires but
// which does not change any statistic.
const statsPath = "mink-datafile.parquet"

// fileStats computes the Iceberg column statistics of a written file from
// its Parquet footer with iceberg-go (default metrics mode: truncate(16)
// for strings and binaries), as a format-version-2 manifest entry, plus
// the bounds of fields nested in structs that iceberg-go leaves out (see
// structBounds).
func fileStats(schema *iceberg.Schema, meta *metadata.FileMetaData, size int, partition int32) (Stats, error) {
	df, err := table.DataFileFromMetadata(table.DataFileArgs{
		Schema:          schema,
		Spec:            PartitionSpec(),
		Format:          iceberg.ParquetFile,
		Metadata:        meta,
		FilePath:        statsPath,
		FileSize:        int64(size),
		Content:         iceberg.EntryContentData,
		PartitionValues: map[int]any{PartitionFieldID: partition},
		FormatVersion:   2,
	})
	if err != nil {
		return Stats{}, fmt.Errorf("datafile: column statistics: %w", err)
	}
	st := Stats{
		RecordCount:     df.Count(),
		ColumnSizes:     df.ColumnSizes(),
		ValueCounts:     df.ValueCounts(),
		NullValueCounts: df.NullValueCounts(),
		NaNValueCounts:  df.NaNValueCounts(),
		LowerBounds:     maps.Clone(df.LowerBoundValues()),
		UpperBounds:     maps.Clone(df.UpperBoundValues()),
		SplitOffsets:    df.SplitOffsets(),
	}
	if st.LowerBounds == nil {
		st.LowerBounds = map[int][]byte{}
	}
	if st.UpperBounds == nil {
		st.UpperBounds = map[int][]byte{}
	}
	if err := structBounds(schema, meta, st.LowerBounds, st.UpperBounds); err != nil {
		return Stats{}, fmt.Errorf("datafile: column bounds: %w", err)
	}
	return st, nil
}
