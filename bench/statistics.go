package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/datasketches-go/theta"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/puffin"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/node"
)

func init() {
	register(Scenario{
		Name:  "statistics",
		Title: "Statistics: distinct counts from merged sketches",
		About: `The flight records (flights-3m.parquet) are produced as JSON values into a
topic of 4 partitions on an in-process kfake broker and indexed by one Mink
node (real PostgreSQL; json table of the flights schema, default range size,
writer statistics every second). Each data file's build keeps a theta
sketch per primitive field in Postgres; the writer merges them (no data is
read again) into a Puffin statistics file of the current snapshot
(docs/design.md §4.6). Once every record is committed and the statistics
file names a snapshot that holds them all, iceberg-go loads the table
through the REST catalog, reads the Puffin file through the S3 API,
deserializes every apache-datasketches-theta-v1 blob with datasketches-go,
and compares its estimate with the exact distinct count of the field,
computed from the whole table read back with iceberg-go.`,
		Run: runStatistics,
	})
}

func runStatistics(ctx context.Context, h *H) error {
	values, err := flightValues(h, ifQuick(h, 0, scQuickRecords))
	if err != nil {
		return err
	}
	records := int64(len(values))
	pg, err := h.Postgres(ctx)
	if err != nil {
		return err
	}
	dir, err := h.TempDir()
	if err != nil {
		return err
	}
	h.Figure(Figure{Name: "NDV error, largest", Unit: "%", Max: 5,
		Note: "largest relative error, abs(estimate − exact) / exact, over the sketched fields; target ≤ 5%"})
	h.Figure(Figure{Name: "Puffin statistics file", Unit: "KiB"})
	h.Figure(Figure{Name: "sketches per data file", Unit: "KiB",
		Note: "data_files.sketches in Postgres, mean over the table's live files"})
	h.Figure(Figure{Name: "statistics after commit", Unit: "s",
		Note: "from every record committed to a statistics file of a snapshot holding them all (interval 1 s)"})
	for run := 0; run < h.Runs; run++ {
		if err := statisticsRun(ctx, h, run, values, records, pg, filepath.Join(dir, fmt.Sprint(run))); err != nil {
			return err
		}
	}
	return nil
}

// statisticsRun indexes values into a fresh table and adds one sample of
// each figure.
func statisticsRun(ctx context.Context, h *H, run int, values [][]byte, records int64, pg, dir string) error {
	topic := fmt.Sprintf("flights%d", run)
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(scPartitions, topic))
	if err != nil {
		return err
	}
	defer kc.Close()
	if _, err := produce(ctx, kc.ListenAddrs(), topic, scPartitions, values); err != nil {
		return err
	}
	n, err := node.Start(ctx, node.Config{
		PostgresURL: pg, KafkaBrokers: kc.ListenAddrs(), Listen: "127.0.0.1:0", NodeID: "statistics-1", Auth: auth.ModeNone,
		Warehouse: "mink", LeaseTTL: 10 * time.Second, CacheDir: filepath.Join(dir, "cache"), CacheSize: 4 << 30,
		CommitInterval: 500 * time.Millisecond, StatisticsInterval: time.Second, Logger: frQuietLogger(),
	})
	if err != nil {
		return err
	}
	defer n.Stop()
	name := fmt.Sprintf("flights%d", run)
	def := map[string]any{"namespace": "bench", "name": name, "topic": topic,
		"value_format": string(codec.JSON), "schema": json.RawMessage(FlightsSchema)}
	if err := devenv.CreateTable(ctx, n.URL(), def); err != nil {
		return err
	}
	if err := svWaitCommitted(ctx, n.URL(), "bench."+name, records/scPartitions); err != nil {
		return err
	}
	committed := time.Now()
	cat, err := rest.NewCatalog(ctx, "mink", n.URL())
	if err != nil {
		return err
	}
	id := table.Identifier{"bench", name}
	var tbl *table.Table
	var sf *table.StatisticsFile
	for sf == nil {
		if time.Since(committed) > 2*time.Minute {
			return fmt.Errorf("no statistics file of a snapshot with all %d records after 2 minutes", records)
		}
		if tbl, err = cat.LoadTable(ctx, id); err != nil {
			return err
		}
		for s := range tbl.Metadata().Statistics() {
			snap := tbl.Metadata().SnapshotByID(s.SnapshotID)
			if snap != nil && snap.Summary != nil && snap.Summary.Properties["total-records"] == fmt.Sprint(records) {
				sf = &s
			}
		}
		if sf == nil {
			time.Sleep(200 * time.Millisecond)
		}
	}
	h.Add("statistics after commit", time.Since(committed).Seconds())
	h.Add("Puffin statistics file", float64(sf.FileSizeInBytes)/1024)

	fs, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	fh, err := fs.Open(sf.StatisticsPath)
	if err != nil {
		return err
	}
	content, err := io.ReadAll(fh)
	fh.Close()
	if err != nil {
		return err
	}
	pr, err := puffin.NewReader(bytes.NewReader(content))
	if err != nil {
		return err
	}
	at, err := tbl.Scan(table.WithSnapshotID(sf.SnapshotID)).ToArrowTable(ctx)
	if err != nil {
		return err
	}
	defer at.Release()
	if at.NumRows() != records {
		return fmt.Errorf("read %d records of %d", at.NumRows(), records)
	}
	sc := tbl.Metadata().CurrentSchema()
	exact := testkit.ExactDistinct(sc, at)
	worst := 0.0
	var lines []string
	for _, bm := range pr.Blobs() {
		if bm.Type != puffin.BlobTypeDataSketchesTheta || len(bm.Fields) != 1 {
			return fmt.Errorf("unexpected blob %s of fields %v", bm.Type, bm.Fields)
		}
		raw, err := pr.ReadBlobByMetadata(bm)
		if err != nil {
			return err
		}
		sk, err := theta.Decode(raw, theta.DefaultSeed)
		if err != nil {
			return err
		}
		fid := int(bm.Fields[0])
		want := exact[fid]
		est := sk.Estimate()
		rel := 0.0
		if want > 0 {
			rel = math.Abs(est-float64(want)) / float64(want) * 100
		} else if est != 0 {
			rel = math.Inf(1)
		}
		worst = max(worst, rel)
		col, _ := sc.FindColumnName(fid)
		lines = append(lines, fmt.Sprintf("%s %d/%.0f (%.2f%%)", col, want, est, rel))
	}
	h.Add("NDV error, largest", worst)

	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var meanSketch float64
	if err := conn.QueryRow(ctx, `SELECT coalesce(avg(length(d.sketches)), 0) FROM data_files d JOIN tables t ON t.id = d.table_id
		WHERE t.namespace = 'bench' AND t.name = $1 AND d.removed_snapshot_id IS NULL`, name).Scan(&meanSketch); err != nil {
		return fmt.Errorf("sketch sizes: %w", err)
	}
	h.Add("sketches per data file", meanSketch/1024)
	if run == 0 {
		slices.Sort(lines)
		h.Note("%d records, %d blobs; per field, exact/estimated distinct count (error): %s.",
			records, len(pr.Blobs()), strings.Join(lines, "; "))
	}
	return nil
}
