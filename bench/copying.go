package main

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/datafile"
)

// copyingConfig configures one pass of the copying pipeline.
type copyingConfig struct {
	// Brokers and Topic: what to consume, every partition from its start.
	Brokers []string
	Topic   string
	// Records is how many records the topic holds; the pass ends after
	// consuming them all and committing.
	Records int64
	// Schema is the Iceberg table schema (Mink's json table schema: the
	// _kafka struct, then the value fields), so that both sides encode
	// the same rows.
	Schema *iceberg.Schema
	// Warehouse is a local directory for the hadoop catalog; Table names
	// the table created in it (namespace "bench").
	Warehouse, Table string
	// CommitBytes is the commit interval, in bytes of consumed values.
	CommitBytes int
	// Profile, when set, is where a CPU profile of the timed window goes.
	Profile string
}

// copyingResult is the outcome of one pass.
type copyingResult struct {
	// Window is the timed window: consuming, decoding, writing the data
	// files and committing, from the consumer's creation to the last
	// commit.
	Window idxWindow
	// Commits and DataFiles count the snapshots and data files written.
	Commits, DataFiles int
	// DataBytes and MetadataBytes are the bytes at rest in the table's
	// data/ and metadata/ directories.
	DataBytes, MetadataBytes int64
}

// runCopying runs the copying pipeline a Go user writes today to get a
// Kafka topic into Iceberg: a franz-go consumer reads every partition,
// each record's JSON value is decoded into Arrow (arrow-go's
// RecordBuilder.UnmarshalJSON) beside a _kafka struct built from the
// record, and every cfg.CommitBytes of values apache/iceberg-go appends
// the batch as Parquet data files (partitioned by _kafka.partition, snappy)
// to a table of a local file:// warehouse and commits a snapshot through
// its hadoop catalog.
func runCopying(ctx context.Context, cfg copyingConfig) (copyingResult, error) {
	var res copyingResult
	cat, err := hadoop.NewCatalog("bench", cfg.Warehouse, iceberg.Properties{})
	if err != nil {
		return res, err
	}
	defer cat.Close()
	ns := table.Identifier{"bench"}
	if err := cat.CreateNamespace(ctx, ns, nil); err != nil {
		return res, err
	}
	spec := datafile.PartitionSpec()
	tbl, err := cat.CreateTable(ctx, append(ns, cfg.Table), cfg.Schema,
		catalog.WithPartitionSpec(&spec),
		catalog.WithProperties(iceberg.Properties{table.ParquetCompressionKey: "snappy"}))
	if err != nil {
		return res, err
	}
	sc, err := table.SchemaToArrowSchema(cfg.Schema, nil, true, false)
	if err != nil {
		return res, err
	}
	rctx, cancel := context.WithTimeout(ctx, idxTimeout)
	defer cancel()
	stop, err := startCPUProfile(cfg.Profile)
	if err != nil {
		return res, err
	}
	res.Window, err = idxMeasure(func() error {
		tbl, err = copyingAll(rctx, cfg, tbl, sc, &res)
		return err
	})
	stop()
	if err != nil {
		return res, err
	}
	if snap := tbl.CurrentSnapshot(); snap == nil || snap.Summary == nil ||
		snap.Summary.Properties["total-records"] != fmt.Sprint(cfg.Records) {
		return res, fmt.Errorf("the table does not hold the %d records consumed", cfg.Records)
	}
	loc := strings.TrimPrefix(tbl.Location(), "file://")
	err = filepath.WalkDir(loc, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(loc, path)
		if strings.HasPrefix(rel, "data"+string(filepath.Separator)) {
			res.DataBytes += info.Size()
			res.DataFiles++
		} else {
			res.MetadataBytes += info.Size()
		}
		return nil
	})
	return res, err
}

// copyingAll consumes the topic to its end and appends it to tbl, committing
// every cfg.CommitBytes of values, and returns the table as last committed.
func copyingAll(ctx context.Context, cfg copyingConfig, tbl *table.Table, sc *arrow.Schema, res *copyingResult) (*table.Table, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumeTopics(cfg.Topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()

	mem := memory.NewGoAllocator()
	kb := array.NewStructBuilder(mem, sc.Field(0).Type.(*arrow.StructType))
	defer kb.Release()
	vsc := arrow.NewSchema(sc.Fields()[1:], nil)
	vb := array.NewRecordBuilder(mem, vsc)
	defer vb.Release()
	var consumed int64
	pending := 0

	commit := func() error {
		if kb.Len() == 0 {
			return nil
		}
		kcol := kb.NewArray()
		defer kcol.Release()
		vals := vb.NewRecordBatch()
		defer vals.Release()
		rec := array.NewRecordBatch(sc, append([]arrow.Array{kcol}, vals.Columns()...), vals.NumRows())
		defer rec.Release()
		rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
		if err != nil {
			return err
		}
		defer rdr.Release()
		tx := tbl.NewTransaction()
		if err := tx.Append(ctx, rdr, nil); err != nil {
			return fmt.Errorf("append: %w", err)
		}
		if tbl, err = tx.Commit(ctx); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		res.Commits++
		pending = 0
		return nil
	}

	for consumed < cfg.Records {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			return nil, fmt.Errorf("fetch %s/%d: %w", errs[0].Topic, errs[0].Partition, errs[0].Err)
		}
		var derr error
		fetches.EachRecord(func(r *kgo.Record) {
			if derr != nil {
				return
			}
			copyingKafka(kb, r)
			if err := vb.UnmarshalJSON(r.Value); err != nil {
				derr = fmt.Errorf("decode %d/%d: %w", r.Partition, r.Offset, err)
				return
			}
			consumed++
			pending += len(r.Value)
			if pending >= cfg.CommitBytes {
				derr = commit()
			}
		})
		if derr != nil {
			return nil, derr
		}
	}
	err = commit()
	return tbl, err
}

// copyingKafka appends the _kafka struct of r (Mink's column layout:
// partition, offset, timestamp, timestamp_type, key, headers).
func copyingKafka(kb *array.StructBuilder, r *kgo.Record) {
	kb.Append(true)
	kb.FieldBuilder(0).(*array.Int32Builder).Append(r.Partition)
	kb.FieldBuilder(1).(*array.Int64Builder).Append(r.Offset)
	kb.FieldBuilder(2).(*array.TimestampBuilder).Append(arrow.Timestamp(r.Timestamp.UnixMicro()))
	kb.FieldBuilder(3).(*array.Int32Builder).Append(int32(r.Attrs.TimestampType()))
	if kd := kb.FieldBuilder(4).(*array.BinaryBuilder); r.Key == nil {
		kd.AppendNull()
	} else {
		kd.Append(r.Key)
	}
	hb := kb.FieldBuilder(5).(*array.ListBuilder)
	hb.Append(true)
	hs := hb.ValueBuilder().(*array.StructBuilder)
	for _, h := range r.Headers {
		hs.Append(true)
		hs.FieldBuilder(0).(*array.StringBuilder).Append(h.Key)
		hs.FieldBuilder(1).(*array.BinaryBuilder).Append(h.Value)
	}
}
