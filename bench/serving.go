package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/flights"
	"github.com/minkhq/mink/node"
	"github.com/minkhq/mink/tables"
)

// Serving scenario settings.
const (
	// svValueSize is the size of one record's value in bytes (random,
	// so the Parquet file is as large as the values).
	svValueSize = 1024
	// svFileValues is the value bytes of the one data file served: 128 MiB
	// (svQuickValues with -quick).
	svFileValues  = 128 << 20
	svQuickValues = 32 << 20
	// svColdValues is the value bytes of the data file built cold: the
	// default range size (indexer.Config.RangeSize).
	svColdValues = 16 << 20
	// svGets is how many cached GETs one run times (their total bytes over
	// their total time is the run's sample).
	svGets = 3
	// svTargetMiBps is the cached GET target: 1 GiB/s.
	svTargetMiBps = 1024
	// svReadBuffer is the client's read size in bytes for the main figure.
	svReadBuffer = 1 << 20
)

func init() {
	register(Scenario{
		Name:  "serving",
		Title: "Serving: data file GETs through the S3 API",
		About: `A node (real PostgreSQL, kfake over the wire) and a raw table whose
one partition holds 128 MiB of random 1 KiB values, indexed as one range
(range size = the values' bytes), so its only data file is about 128 MiB
of Parquet. Cached: GET /<warehouse>/<key> of the whole file over loopback
while it is in the node's disk cache (the indexer puts it there), read by a
Go HTTP client in 1 MiB reads; the same with io.Copy into io.Discard (8 KiB
reads) shows what the client's read loop costs. Cold: raw tables whose
one partition holds one 16 MiB range (the default range size), one per run
and one more, and as many json tables of flight records
(flights-3m.parquet) of one 16 MiB range of JSON. A server-only node is
started once; it builds and serves the file of the first table of each
kind (the warm-up), then each run GETs the file of the next table of each
kind, which no node has read (the
forwarded-read header makes the node build it itself: fetch, encode,
SHA-256 check against the indexed checksum, serve): the cold build of a
running node, its Postgres pool, Kafka and HTTP connections open. The same
first files are also GET from a node process started for the purpose
(informative). Each cold build's reference is its bare limit, measured in
the same run: a new franz-go consumer reading the file's offset range alone
(from its creation: the connection is included, and measured apart as the
Kafka client connect time), then datafile.Build encoding those records
alone, one after the other. MiB are file bytes.`,
		Run: runServing,
	})
}

// svEnv is the scenario's Kafka and indexing node.
type svEnv struct {
	kafka *kfake.Cluster
	cfg   node.Config
	node  *node.Node
	// forwardKey signs the GETs marked forwarded (auth.SignForward).
	forwardKey []byte
}

func (e *svEnv) stop() {
	if e.node != nil {
		e.node.Stop()
	}
	e.kafka.Close()
}

// svColdGet starts a fresh server-only node (empty cache), GETs key from
// it marked as forwarded (so it builds the file itself, whoever owns it),
// stops it, and returns the GET's time to the last byte.
func svColdGet(ctx context.Context, env *svEnv, dir, id, key string, size int64, read func(io.Reader) (int64, error)) (time.Duration, error) {
	cfg := env.cfg
	cfg.NodeID, cfg.Listen, cfg.Advertise = id, "127.0.0.1:0", ""
	cfg.Roles = []string{cluster.RoleServer}
	cfg.CacheDir = filepath.Join(dir, id)
	n, err := node.Start(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer n.Stop()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer client.CloseIdleConnections()
	return svGet(ctx, client, n.URL()+"/"+cfg.Warehouse+"/"+key, size, env.forwardKey, id, read)
}

// svBuilder is a running server-only node and a client with its
// connection kept open, as a node serving a query engine has.
type svBuilder struct {
	node       *node.Node
	client     *http.Client
	url        string
	forwardKey []byte
}

// svStartBuilder starts a server-only node (empty cache) named id.
func svStartBuilder(ctx context.Context, env *svEnv, dir, id string) (*svBuilder, error) {
	cfg := env.cfg
	cfg.NodeID, cfg.Listen, cfg.Advertise = id, "127.0.0.1:0", ""
	cfg.Roles = []string{cluster.RoleServer}
	cfg.CacheDir = filepath.Join(dir, id)
	n, err := node.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &svBuilder{node: n, client: &http.Client{Transport: &http.Transport{DisableCompression: true}},
		url: n.URL() + "/" + cfg.Warehouse + "/", forwardKey: env.forwardKey}, nil
}

// get GETs key from the node marked as forwarded (so it builds the file
// itself, whoever owns it) and returns the time to the last byte.
func (b *svBuilder) get(ctx context.Context, key string, size int64, read func(io.Reader) (int64, error)) (time.Duration, error) {
	return svGet(ctx, b.client, b.url+key, size, b.forwardKey, b.node.ID(), read)
}

func (b *svBuilder) stop() {
	b.client.CloseIdleConnections()
	b.node.Stop()
}

// restart stops the node and starts it again with the same configuration:
// the objects server clears its cache directory at start.
func (e *svEnv) restart(ctx context.Context) error {
	e.node.Stop()
	e.node = nil
	n, err := node.Start(ctx, e.cfg)
	if err != nil {
		return err
	}
	e.node = n
	return nil
}

func runServing(ctx context.Context, h *H) error {
	valueBytes := ifQuick(h, svFileValues, svQuickValues)
	records := valueBytes / svValueSize

	pg, err := h.Postgres(ctx)
	if err != nil {
		return err
	}
	dir, err := h.TempDir()
	if err != nil {
		return err
	}
	kc, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		return err
	}
	env := &svEnv{kafka: kc, cfg: node.Config{
		PostgresURL: pg, KafkaBrokers: kc.ListenAddrs(), Listen: "127.0.0.1:0", NodeID: "serving-1", Auth: auth.ModeNone,
		Warehouse: "mink", LeaseTTL: 10 * time.Second, CacheDir: filepath.Join(dir, "cache"), CacheSize: 1 << 30,
		// One range of exactly the produced values: cut by size, never by time.
		// The memory budget must hold a whole range (values plus per-record
		// overhead), or the indexer cuts it early.
		RangeSize: svColdValues, IndexMemory: 8 * svColdValues, FlushInterval: time.Hour, CommitInterval: 500 * time.Millisecond,
		Logger: frQuietLogger(),
	}}
	defer env.stop()
	if env.node, err = node.Start(ctx, env.cfg); err != nil {
		return err
	}
	if env.forwardKey, err = svForwardKey(ctx, pg); err != nil {
		return err
	}
	// The advertised URL has the ephemeral port; keep the same port on
	// restarts so the table's S3 endpoint stays valid.
	env.cfg.Listen = env.node.URL()[len("http://"):]
	env.cfg.Advertise = env.node.URL()

	// The files built cold first: ranges of the default size, one per run
	// and one more to warm the building node up with, each in a table of
	// its own. Then the large file,
	// after a restart with a range size to match it.
	batches := h.Runs + 1
	coldKeys, coldSizes, err := svTables(ctx, h, env, map[string]any{"name": "blobs16", "value_format": "raw"},
		svValues(svColdValues), batches)
	if err != nil {
		return err
	}
	coldKey, coldSize := coldKeys[0], coldSizes[0]
	coldRecords := svColdValues / svValueSize
	// json tables of flight records, a range of the default size each.
	var jsonValues [][]byte
	var jsonKeys []string
	var jsonSizes []int64
	if path, ok := h.Data(FlightsFile); ok {
		all, err := flights.JSON(path, svColdValues/64)
		if err != nil {
			return err
		}
		n := 0
		for _, v := range all {
			jsonValues = append(jsonValues, v)
			if n += len(v); n >= svColdValues {
				break
			}
		}
		jsonKeys, jsonSizes, err = svTables(ctx, h, env, map[string]any{"name": "flights16", "value_format": "json",
			"schema": json.RawMessage(FlightsSchema)}, jsonValues, batches)
		if err != nil {
			return err
		}
	} else {
		h.Note("The json figures are skipped: %s not found (set MINK_DATA_DIR).", FlightsFile)
	}
	jsonKey, jsonSize := "", int64(0)
	if len(jsonKeys) > 0 {
		jsonKey, jsonSize = jsonKeys[0], jsonSizes[0]
	}
	env.cfg.RangeSize, env.cfg.IndexMemory = int64(valueBytes), 2*int64(valueBytes)
	if err := env.restart(ctx); err != nil {
		return err
	}
	key, size, err := svTable(ctx, h, env, "blobs", valueBytes)
	if err != nil {
		return err
	}
	url := env.node.URL() + "/" + env.cfg.Warehouse + "/" + key
	h.Note("Cached file: %d records of %d B random values, %.1f MiB of Parquet (%s). Cold files: %d records, %.1f MiB each (%s, the warm-up, and one per run after it: %s).",
		records, svValueSize, float64(size)/(1<<20), key, coldRecords, float64(coldSize)/(1<<20), coldKey, strings.Join(coldKeys[1:], ", "))

	h.Figure(Figure{Name: "cached GET", Unit: "MiB/s", Min: svTargetMiBps,
		Note: fmt.Sprintf("whole %.0f MiB file, client reads of 1 MiB; served from the disk cache with sendfile", float64(size)/(1<<20))})
	h.Figure(Figure{Name: "cached GET, io.Copy to io.Discard", Unit: "MiB/s", Ref: "cached GET",
		Note: "the usual Go client loop (8 KiB reads)"})
	h.Figure(Figure{Name: "raw: bare limit", Unit: "MiB/s", Note: "file bytes / (time to fetch the range alone with a new franz-go consumer + time to encode it alone with datafile.Build), one after the other"})
	h.Figure(Figure{Name: "cold build", Unit: "MiB/s", Ref: "raw: bare limit", MinRatio: 0.8,
		Note: fmt.Sprintf("raw, %.0f MiB file (the default range size) no node has cached: file bytes / time to the last byte of its first GET, on a running server node that has built and served other files (its Postgres pool, Kafka and HTTP connections open)", float64(coldSize)/(1<<20))})
	h.Figure(Figure{Name: "cold build records", Unit: "records/s"})
	h.Figure(Figure{Name: "cold GET time", Unit: "s"})
	h.Figure(Figure{Name: "cold build, fresh process", Unit: "MiB/s", Ref: "raw: bare limit",
		Note: "the same build as the first GET of a node process just started (empty cache; new Postgres pool and Kafka connections); informative"})
	if jsonKey != "" {
		h.Figure(Figure{Name: "json: bare limit", Unit: "records/s", Note: "records / (fetch alone + encode alone), as for raw"})
		h.Figure(Figure{Name: "json: cold build", Unit: "records/s", Ref: "json: bare limit", MinRatio: 0.8,
			Note: fmt.Sprintf("flight records, %d values (%.1f MiB of JSON, one range of the default size), %.1f MiB of Parquet; first GET on the running node, as for raw", len(jsonValues), float64(svColdValues)/(1<<20), float64(jsonSize)/(1<<20))})
		h.Figure(Figure{Name: "json: cold GET time", Unit: "s"})
		h.Figure(Figure{Name: "json: cold build, fresh process", Unit: "records/s", Ref: "json: bare limit",
			Note: "first GET of a node process just started; informative"})
		h.Figure(Figure{Name: "json: bare fetch time", Unit: "s"})
		h.Figure(Figure{Name: "json: bare encode time", Unit: "s"})
	}
	h.Figure(Figure{Name: "raw: bare fetch time", Unit: "s", Note: "from the consumer's creation to the range's last record"})
	h.Figure(Figure{Name: "Kafka client connect time", Unit: "s", Note: "a new franz-go client's Ping (connection, ApiVersions, metadata): the part of each bare fetch a running node does not pay; informative"})
	h.Figure(Figure{Name: "raw: bare encode time", Unit: "s"})

	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer client.CloseIdleConnections()
	buf := make([]byte, svReadBuffer)
	bigReads := func(r io.Reader) (int64, error) {
		var n int64
		for {
			k, err := r.Read(buf)
			n += int64(k)
			if err == io.EOF {
				return n, nil
			}
			if err != nil {
				return n, err
			}
		}
	}
	discard := func(r io.Reader) (int64, error) { return io.Copy(io.Discard, r) }
	// A first GET: the file is cached (by the indexer, or by this build).
	if _, err := svGet(ctx, client, url, size, nil, "", bigReads); err != nil {
		return err
	}
	// The running node the cold builds are measured on: server only, its
	// reads marked as forwarded so that it builds every file itself. It
	// builds and serves the warm-up files (the first tables') first.
	builder, err := svStartBuilder(ctx, env, dir, "serving-builder")
	if err != nil {
		return err
	}
	defer builder.stop()
	warm := []string{coldKey}
	if jsonKey != "" {
		warm = append(warm, jsonKey)
	}
	for i, k := range warm {
		if _, err := builder.get(ctx, k, []int64{coldSize, jsonSize}[i], bigReads); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}

	var profPath string
	var lastCached float64
	for run := 0; run < h.Runs; run++ {
		stop := func() {}
		if run == h.Runs-1 {
			profPath = filepath.Join(dir, "serving-cached.pprof")
			if stop, err = startCPUProfile(profPath); err != nil {
				h.Logf("cpu profile: %v", err)
				stop, profPath = func() {}, ""
			}
		}
		var took time.Duration
		for i := 0; i < svGets; i++ {
			d, err := svGet(ctx, client, url, size, nil, "", bigReads)
			if err != nil {
				stop()
				return err
			}
			took += d
		}
		stop()
		lastCached = svMiBps(svGets*size, took)
		h.Add("cached GET", lastCached)
		took = 0
		for i := 0; i < svGets; i++ {
			d, err := svGet(ctx, client, url, size, nil, "", discard)
			if err != nil {
				return err
			}
			took += d
		}
		h.Add("cached GET, io.Copy to io.Discard", svMiBps(svGets*size, took))

		// Run r reads the file of table r+1, which no node has read yet.
		rk, rs := coldKeys[run+1], coldSizes[run+1]
		stopCold := func() {}
		if p := os.Getenv("MINK_BENCH_SERVING_PROFILE"); p != "" && run == h.Runs-1 {
			if stopCold, err = startCPUProfile(p); err != nil {
				return err
			}
		}
		d, err := builder.get(ctx, rk, rs, bigReads)
		stopCold()
		if err != nil {
			return err
		}
		h.Add("cold build", svMiBps(rs, d))
		h.Add("cold build records", float64(coldRecords)/d.Seconds())
		h.Add("cold GET time", d.Seconds())
		fetch, connect, enc, err := svBareLimit(ctx, env, rk, rs, map[string]any{"value_format": "raw"})
		if err != nil {
			return fmt.Errorf("raw bare limit: %w", err)
		}
		h.Add("raw: bare limit", svMiBps(rs, fetch+enc))
		h.Add("raw: bare fetch time", fetch.Seconds())
		h.Add("Kafka client connect time", connect.Seconds())
		h.Add("raw: bare encode time", enc.Seconds())
		if d, err = svColdGet(ctx, env, dir, fmt.Sprintf("serving-cold-%d", run), coldKey, coldSize, bigReads); err != nil {
			return err
		}
		h.Add("cold build, fresh process", svMiBps(coldSize, d))
		if jsonKey != "" {
			jk, js := jsonKeys[run+1], jsonSizes[run+1]
			d, err := builder.get(ctx, jk, js, bigReads)
			if err != nil {
				return err
			}
			h.Add("json: cold build", float64(len(jsonValues))/d.Seconds())
			h.Add("json: cold GET time", d.Seconds())
			if d, err = svColdGet(ctx, env, dir, fmt.Sprintf("serving-cold-json-%d", run), jsonKey, jsonSize, bigReads); err != nil {
				return err
			}
			h.Add("json: cold build, fresh process", float64(len(jsonValues))/d.Seconds())
			fetch, _, enc, err := svBareLimit(ctx, env, jk, js, map[string]any{"value_format": "json", "schema": json.RawMessage(FlightsSchema)})
			if err != nil {
				return fmt.Errorf("json bare limit: %w", err)
			}
			h.Add("json: bare limit", float64(len(jsonValues))/(fetch+enc).Seconds())
			h.Add("json: bare fetch time", fetch.Seconds())
			h.Add("json: bare encode time", enc.Seconds())
		}
	}
	noteCold := "A cold build is the bare limit's work plus its own: the lookups of the file in Postgres, the GET, and serving the bytes (from memory). " +
		"It hashes the file once (datafile.Build's SHA-256 is the check and the ETag), and kafka.ReadRange parses each 2 MiB Fetch response while the next one is on its way, " +
		"where the bare consumer receives the 16 MiB range in one fetch of up to 32 MiB before any of it is parsed. " +
		"The samples of each figure spread widely when other work shares the 2 cores; compare a run's samples, not only the medians."
	h.Note("%s", noteCold)
	// The large file built cold too, once (informative).
	if d, err := svColdGet(ctx, env, dir, "serving-cold-large", key, size, bigReads); err != nil {
		h.Note("Cold build of the %.0f MiB file failed: %s", float64(size)/(1<<20), oneLine(err.Error()))
	} else {
		h.Note("Cold build of the %.0f MiB file (once): %.2f s, %.0f MiB/s.", float64(size)/(1<<20), d.Seconds(), svMiBps(size, d))
	}
	if lastCached < svTargetMiBps && profPath != "" {
		h.Note("Cached GET target missed; CPU profile of the last run's %d cached GETs (client and server in this process; CPU ms per GET): %s",
			svGets, frProfileSummary(profPath, svGets, "GET", []frBucket{
				{"client body reads", `net/http\.\(\*body\)\.Read$`},
				{"  of which read syscalls (kernel copy out of the socket)", `^syscall\.read$`},
				{"server ServeContent", `objects\.\(\*Server\)\.serveContent$`},
				{"  of which sendfile", `internal/poll\.SendFile$|poll\.sendFile$`},
				{"GC", `runtime\.gcBgMarkWorker$`},
			}))
	}
	return nil
}

// svTable creates a raw table on a new one-partition topic, produces
// valueBytes of random values to it, waits for their commit, and returns
// the key and size of its largest data file.
func svTable(ctx context.Context, h *H, env *svEnv, name string, valueBytes int) (key string, size int64, err error) {
	return svTableOf(ctx, h, env, map[string]any{"name": name, "value_format": "raw"}, svValues(valueBytes))
}

// svTables creates n tables of def, named <name>-0 … <name>-<n-1>, each
// on its own one-partition topic holding values (one indexed range, as
// svTableOf), and returns the keys and sizes of their data files. A
// table per file keeps each file's range the last data of its partition,
// so the bare consumer reads the range and nothing after it.
func svTables(ctx context.Context, h *H, env *svEnv, def map[string]any, values [][]byte, n int) ([]string, []int64, error) {
	keys := make([]string, n)
	sizes := make([]int64, n)
	name := def["name"].(string)
	for i := range n {
		d := maps.Clone(def)
		d["name"] = fmt.Sprintf("%s-%d", name, i)
		k, sz, err := svTableOf(ctx, h, env, d, values)
		if err != nil {
			return nil, nil, err
		}
		keys[i], sizes[i] = k, sz
	}
	return keys, sizes, nil
}

// svValues returns valueBytes/svValueSize random values of svValueSize
// bytes (the same every run).
func svValues(valueBytes int) [][]byte {
	rng := rand.New(rand.NewChaCha8([32]byte{'m', 'i', 'n', 'k'}))
	values := make([][]byte, valueBytes/svValueSize)
	for i := range values {
		values[i] = make([]byte, svValueSize)
		for j := 0; j < svValueSize; j += 8 {
			v := rng.Uint64()
			for k := 0; k < 8; k++ {
				values[i][j+k] = byte(v >> (8 * k))
			}
		}
	}
	return values
}

// svTableOf creates the table def (namespace bench, topic named as the
// table, one partition), produces values to it, waits for their commit,
// and returns the key and size of its largest data file.
func svTableOf(ctx context.Context, h *H, env *svEnv, def map[string]any, values [][]byte) (key string, size int64, err error) {
	const ns = "bench"
	name := def["name"].(string)
	if err := env.kafka.CreateTopic(name, 1, nil); err != nil {
		return "", 0, err
	}
	def["namespace"], def["topic"] = ns, name
	if err := devenv.CreateTable(ctx, env.node.URL(), def); err != nil {
		return "", 0, err
	}
	h.Logf("%s: producing %d records", name, len(values))
	if _, err := produce(ctx, env.kafka.ListenAddrs(), name, 1, values); err != nil {
		return "", 0, err
	}
	if err := svWaitCommitted(ctx, env.node.URL(), ns+"."+name, int64(len(values))); err != nil {
		return "", 0, err
	}
	key, size, err = svDataFile(ctx, env.node.URL(), table.Identifier{ns, name})
	if err == nil {
		h.Logf("%s: data file %s, %.1f MiB", name, key, float64(size)/(1<<20))
	}
	return key, size, err
}

// svForwardKey reads the cluster's forward key from Postgres (the secret
// node.Start stored), so the scenario can mark a GET forwarded.
func svForwardKey(ctx context.Context, pg string) ([]byte, error) {
	pool, err := pgxpool.New(ctx, pg)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	secret, err := auth.ClusterSecret(ctx, pool)
	if err != nil {
		return nil, err
	}
	return auth.DeriveKey(secret, auth.PurposeForward), nil
}

// svGet GETs url (marked forwarded by node "bench" to node to and signed
// with forwardKey when it is not nil, so the node builds the file itself)
// with read, checks the status and length, and returns the time to the
// last byte.
func svGet(ctx context.Context, client *http.Client, url string, size int64, forwardKey []byte, to string, read func(io.Reader) (int64, error)) (time.Duration, error) {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	if forwardKey != nil {
		auth.SignForward(forwardKey, req, "bench", to)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := read(resp.Body)
	took := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK || n != size {
		return 0, fmt.Errorf("GET %s: status %d, %d bytes of %d", url, resp.StatusCode, n, size)
	}
	return took, nil
}

// svMiBps is bytes over d in MiB/s.
func svMiBps(bytes int64, d time.Duration) float64 {
	return float64(bytes) / (1 << 20) / d.Seconds()
}

// svWaitCommitted waits until every partition of table has its committed
// offset at least end.
func svWaitCommitted(ctx context.Context, nodeURL, table string, end int64) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, nodeURL+"/admin/v1/tables/"+table+"/partitions", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		var body struct {
			Partitions []struct {
				CommittedOffset int64 `json:"committed_offset"`
			} `json:"partitions"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("partitions of %s: %w", table, err)
		}
		done := len(body.Partitions) > 0
		for _, p := range body.Partitions {
			done = done && p.CommittedOffset >= end
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not committed to offset %d after 5 minutes", table, end)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// svDataFile loads the table through iceberg-go and returns the key and
// size of its largest data file.
func svDataFile(ctx context.Context, nodeURL string, id table.Identifier) (string, int64, error) {
	cat, err := rest.NewCatalog(ctx, "mink", nodeURL)
	if err != nil {
		return "", 0, err
	}
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		return "", 0, err
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return "", 0, err
	}
	var key string
	var size int64
	for _, t := range tasks {
		if s := t.File.FileSizeBytes(); s > size {
			key, size = tables.Key(t.File.FilePath()), s
		}
	}
	if key == "" {
		return "", 0, fmt.Errorf("%v: no data file", id)
	}
	return key, size, nil
}

// svBareLimit measures the parts of a cold build of the data file key (of
// size bytes) alone, one after the other: a franz-go consumer reading its
// offset range from Kafka (read_committed, fetches of up to 32 MiB as
// kafka.ReadRange asks) from client creation to the range's last record,
// then datafile.Build encoding those records (the table def: value_format
// and schema; key format raw). The encoded file must have the indexed size.
// connect is what a new client's first request costs (a Ping of another
// new client: connection, ApiVersions, metadata), included in fetch.
func svBareLimit(ctx context.Context, env *svEnv, key string, size int64, def map[string]any) (fetch, connect, encode time.Duration, err error) {
	ref, ok := tables.ParseDataFileKey(key)
	if !ok {
		return 0, 0, 0, fmt.Errorf("%s: not a data file key", key)
	}
	topic := strings.Split(ref.TableKey, "/")[1]
	start := time.Now()
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.kafka.ListenAddrs()...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {ref.Partition: kgo.NewOffset().At(ref.Start)}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxBytes(32<<20), kgo.FetchMaxPartitionBytes(32<<20))
	if err != nil {
		return 0, 0, 0, err
	}
	recs := make([]*kgo.Record, 0, ref.End-ref.Start)
	for len(recs) == 0 || recs[len(recs)-1].Offset < ref.End-1 {
		fs := cl.PollFetches(ctx)
		if errs := fs.Errors(); len(errs) > 0 {
			cl.Close()
			return 0, 0, 0, errs[0].Err
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < ref.End {
				recs = append(recs, r)
			}
		})
	}
	fetch = time.Since(start)
	cl.Close()
	start = time.Now()
	pc, err := kgo.NewClient(kgo.SeedBrokers(env.kafka.ListenAddrs()...))
	if err != nil {
		return 0, 0, 0, err
	}
	err = pc.Ping(ctx)
	connect = time.Since(start)
	pc.Close()
	if err != nil {
		return 0, 0, 0, err
	}
	d := tables.Definition{Namespace: "bench", Name: "bare", Topic: topic, ValueFormat: def["value_format"].(string),
		KeyFormat: string(codec.Raw)}
	if sch, ok := def["schema"].(json.RawMessage); ok {
		d.Schema = sch
	}
	schema, _, err := tables.Schemas(&d)
	if err != nil {
		return 0, 0, 0, err
	}
	start = time.Now()
	res, err := datafile.Build(&datafile.Spec{Schema: schema, KeyFormat: codec.Raw, ValueFormat: codec.Format(d.ValueFormat)}, recs)
	encode = time.Since(start)
	if err != nil {
		return 0, 0, 0, err
	}
	if res.Data == nil || int64(len(res.Data.Bytes)) != size {
		return 0, 0, 0, fmt.Errorf("%s: the bare encode of %d records is not the indexed file of %d bytes", key, len(recs), size)
	}
	return fetch, connect, encode, nil
}
