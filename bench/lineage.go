package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/internal/testkit/proc"
)

// Lineage scenario settings.
const (
	// lnNodes serve the loads, round-robin.
	lnNodes = 3
	// lnPartitions is the topic's partition count.
	lnPartitions = 6
	// lnLoadsPerSecond is the rate of table loads, spread over the nodes.
	lnLoadsPerSecond = 20
	// lnRate is the background produce rate in records per second.
	lnRate = 2000
	// lnDuration is how long the scenario produces and loads
	// (lnQuickDuration with -quick).
	lnDuration      = 10 * time.Minute
	lnQuickDuration = 2 * time.Minute
	// lnMaxMetadata is the target bound of the metadata JSON, in KiB.
	lnMaxMetadata = 1024
)

func init() {
	register(Scenario{
		Name:  "lineage",
		Title: "Lineage: the history that zero-lag loads make, under continuous loads",
		About: fmt.Sprintf(`Every zero-lag table load that finds records past the table's
content commits a snapshot, so the history grows with the load rate. A json
table of flight records on a %d-partition topic, %d nodes in process (real
PostgreSQL, kfake over the wire), node defaults for flush, commit and
history (%s = %d snapshots, %s = %s). A producer writes %d records/s while
%d table loads a second go to the nodes in turn (REST GET of the table, as an
engine's load does, timed from request to the end of the body), for %v
(one run; %v with -quick). Figures: the largest metadata JSON a load
returned and its snapshot count, and load latency in the first and in the
last minute.`, lnPartitions, lnNodes, icebergmeta.PropMaxSnapshots, icebergmeta.DefaultMaxSnapshots,
			icebergmeta.PropThinning, icebergmeta.DefaultThinning, lnRate, lnLoadsPerSecond, lnDuration, lnQuickDuration),
		Run: runLineage,
	})
}

// lnSample is one table load.
type lnSample struct {
	at        time.Duration // since the first load
	took      time.Duration
	size      int // metadata JSON bytes
	snapshots int
	byLoad    bool // the current snapshot was committed by a load
}

func runLineage(ctx context.Context, h *H) error {
	values, err := flightValues(h, 100_000)
	if err != nil {
		return err
	}
	duration := ifQuick(h, lnDuration, lnQuickDuration)
	const topic, ns, name = "lineage", "bench", "lineage"
	env, err := flightsEnv(ctx, h, lnNodes, lnPartitions, name)
	if err != nil {
		return err
	}
	defer env.Stop()

	h.Figure(Figure{Name: "metadata JSON, largest", Unit: "KiB", Max: lnMaxMetadata,
		Note: "the largest metadata a load returned"})
	h.Figure(Figure{Name: "snapshots in the metadata, largest", Unit: "snapshots"})
	h.Figure(Figure{Name: "snapshots committed by loads", Unit: "per second"})
	h.Figure(Figure{Name: "metadata JSON written", Unit: "MiB/s",
		Note: "snapshots committed per second × mean metadata size: what a commit stores in Postgres"})
	h.Figure(Figure{Name: "load p50, first minute", Unit: "ms"})
	h.Figure(Figure{Name: "load p99, first minute", Unit: "ms"})
	h.Figure(Figure{Name: "load p50, last minute", Unit: "ms"})
	h.Figure(Figure{Name: "load p99, last minute", Unit: "ms", Ref: "load p99, first minute", MaxRatio: 2,
		Note: "target: within 2× the first minute's"})

	prod := frStartProducing(ctx, env.Brokers, topic, values, lnRate)
	defer prod.stop()

	dir, err := h.TempDir()
	if err != nil {
		return err
	}
	profPath := filepath.Join(dir, "lineage.pprof")
	stopProfile, err := startCPUProfile(profPath)
	if err != nil {
		h.Logf("cpu profile: %v", err)
		stopProfile, profPath = func() {}, ""
	}
	defer stopProfile()
	h.Logf("producing %d records/s and loading %d times a second for %v", lnRate, lnLoadsPerSecond, duration)
	var (
		mu      sync.Mutex
		samples []lnSample
		failed  error
		wg      sync.WaitGroup
	)
	tick := time.NewTicker(time.Second / lnLoadsPerSecond)
	defer tick.Stop()
	start := time.Now()
	for i := 0; time.Since(start) < duration; i++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		url := fmt.Sprintf("%s/v1/namespaces/%s/tables/%s", env.Nodes[i%lnNodes].URL(), ns, name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := lnLoad(ctx, url)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = err
				return
			}
			s.at = time.Since(start)
			samples = append(samples, s)
		}()
		if i%(60*lnLoadsPerSecond) == 0 && i > 0 {
			mu.Lock()
			last := samples[len(samples)-1]
			mu.Unlock()
			h.Logf("%v: %d loads, metadata %d KiB with %d snapshots, last load %v", time.Since(start).Round(time.Second),
				i, last.size>>10, last.snapshots, last.took.Round(time.Millisecond))
		}
	}
	wg.Wait()
	stopProfile()
	if failed != nil {
		return fmt.Errorf("load: %w", failed)
	}
	if err := prod.err(); err != nil {
		return err
	}

	var largest, most, byLoad int
	var sizes float64
	var first, last []float64
	for _, s := range samples {
		largest, most = max(largest, s.size), max(most, s.snapshots)
		sizes += float64(s.size)
		if s.byLoad {
			byLoad++
		}
		switch {
		case s.at < time.Minute:
			first = append(first, frMS(s.took))
		case s.at >= duration-time.Minute:
			last = append(last, frMS(s.took))
		}
	}
	var loadSnapshots float64
	for _, n := range env.Nodes {
		v, err := lnMetric(ctx, n.URL(), "mink_load_snapshots_total")
		if err != nil {
			return err
		}
		loadSnapshots += v
	}
	perSecond := loadSnapshots / duration.Seconds()
	h.Add("metadata JSON, largest", float64(largest)/1024)
	h.Add("snapshots in the metadata, largest", float64(most))
	h.Add("snapshots committed by loads", perSecond)
	h.Add("metadata JSON written", perSecond*sizes/float64(len(samples))/(1<<20))
	h.Add("load p50, first minute", frPercentile(first, 50))
	h.Add("load p99, first minute", frPercentile(first, 99))
	h.Add("load p50, last minute", frPercentile(last, 50))
	h.Add("load p99, last minute", frPercentile(last, 99))
	h.Note("%d loads in %v; %d answered a snapshot a load committed (the rest found the table already holding Kafka's last stable offsets).",
		len(samples), duration, byLoad)
	if profPath != "" {
		h.Note("CPU profile of the run (whole process: %d nodes, producer, loads; CPU ms per load): %s", lnNodes,
			frProfileSummary(profPath, len(samples), "load", []frBucket{
				{"catalog load handler (all of a load on the server)", `catalog\.\(\*Handler\)\.loadTable$`},
				{"  of which tail builds and commits", `tail\.\(\*Loader\)\.extend$`},
				{"  of which icebergmeta.Append", `icebergmeta\.Append$`},
				{"  of which metadata JSON parse", `table\.ParseMetadataBytes$`},
				{"  of which datafile.Build", `datafile\.Build$`},
				{"writers", `writer\.\(\*Writer\)\.Run$`},
				{"indexers", `indexer\.\(\*Indexer\)\.Run$`},
				{"the bench's client (HTTP, JSON of each load)", `main\.lnLoad$`},
				{"background producer", `kgo\.\(\*Client\)\.Produce$|frProduceAtRate`},
				{"kfake broker", `kfake\.`},
				{"GC", `runtime\.gcBgMarkWorker$`},
			}))
	}
	return nil
}

// lnLoad loads the table at url (GET, the body read) and reads the size
// and snapshot count of its metadata.
func lnLoad(ctx context.Context, url string) (lnSample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return lnSample{}, err
	}
	began := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return lnSample{}, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(began)
	if err != nil {
		return lnSample{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return lnSample{}, fmt.Errorf("%s: %s: %s", url, resp.Status, body)
	}
	var res struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return lnSample{}, err
	}
	var md struct {
		Current   *int64 `json:"current-snapshot-id"`
		Snapshots []struct {
			ID      int64             `json:"snapshot-id"`
			Summary map[string]string `json:"summary"`
		} `json:"snapshots"`
	}
	if err := json.Unmarshal(res.Metadata, &md); err != nil {
		return lnSample{}, err
	}
	s := lnSample{took: took, size: len(res.Metadata), snapshots: len(md.Snapshots)}
	for _, sn := range md.Snapshots {
		if md.Current != nil && sn.ID == *md.Current {
			s.byLoad = sn.Summary[icebergmeta.SummaryCommittedBy] == icebergmeta.CommittedByLoad
		}
	}
	return s, nil
}

// lnMetric reads one unlabelled series of a node's /metrics (0 when it
// has none).
func lnMetric(ctx context.Context, nodeURL, series string) (float64, error) {
	v, err := proc.Metrics(ctx, nodeURL+"/metrics", series)
	if err != nil {
		return 0, err
	}
	return v[0], nil
}
