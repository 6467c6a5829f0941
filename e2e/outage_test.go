package e2e

// The two outage rows of docs/design.md §3.4, end to end: PostgreSQL or Kafka
// becomes unreachable under running `mink serve` processes
// (internal/clustertest), then comes back.
//
// The cluster in both tests is three processes: two indexers (role
// indexer only) that share the partitions and the writer lease, and one
// server (role server only) that owns every data file. With that split
// no data file is cached by an indexer warming its owner's cache, so which
// files are cached is decided by the test alone: the file it read before
// the outage is cached, the others are not.
//
// Postgres is cut with a netproxy.Proxy between the nodes and the server
// (the test reads the database directly); Kafka with a netproxy.Switch
// the in-process Kafka listens through (the test's producer is cut too).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/netproxy"
)

const (
	outageTTL        = clustertest.DefaultLeaseTTL
	outageMargin     = outageTTL / 6 // cluster's default safety margin
	outagePartitions = 4
	outageNS         = "outage"
	outageTable      = "events"
	outageTopic      = "events"
)

// --- the cluster under test ---

type outageEnv struct {
	t        *testing.T
	env      *clustertest.Env
	db       *pgxpool.Pool // straight to PostgreSQL, never through a proxy
	indexers []*clustertest.Node
	server   *clustertest.Node
	producer *kgo.Client

	mu       sync.Mutex
	produced map[pk][]byte
}

// startOutageEnv starts the three `mink serve` processes on nodePG (a URL
// that may go through a proxy; "" is the test's schema directly) and the
// env's Kafka, creates the topic, the table and a producer.
func startOutageEnv(t *testing.T, env *clustertest.Env, nodePG string) *outageEnv {
	t.Helper()
	e := &outageEnv{t: t, env: env, db: env.Pool(), produced: map[pk][]byte{}}
	start := func(id string, roles ...string) *clustertest.Node {
		return env.StartNode(clustertest.NodeOptions{ID: id, Roles: roles, LeaseTTL: outageTTL, PostgresURL: nodePG})
	}
	e.server = start("srv", cluster.RoleServer)
	e.indexers = []*clustertest.Node{start("ix-1", cluster.RoleIndexer), start("ix-2", cluster.RoleIndexer)}

	env.CreateTopic(outageTopic, outagePartitions)
	env.CreateTable(e.server.URL(), map[string]any{
		"namespace": outageNS, "name": outageTable, "topic": outageTopic, "value_format": "raw",
	})
	var err error
	e.producer, err = kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.DefaultProduceTopic(outageTopic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	t.Cleanup(e.producer.Close)
	return e
}

func (e *outageEnv) nodes() []*clustertest.Node {
	return append([]*clustertest.Node{e.server}, e.indexers...)
}

// firstLog returns the time of n's first log line containing msg at or
// after since (the log's times have millisecond resolution).
func firstLog(n *clustertest.Node, msg string, since time.Time) (time.Time, bool) {
	for _, at := range n.LogTimes(msg) {
		if !at.Before(since.Truncate(time.Millisecond)) {
			return at, true
		}
	}
	return time.Time{}, false
}

func (e *outageEnv) url(path string) string { return e.server.URL() + path }

// records returns n records of batch, spread over the partitions.
func (e *outageEnv) records(batch string, n int) []*kgo.Record {
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Partition: int32(i % outagePartitions),
			Value: fmt.Appendf(nil, "%s-%04d-%s", batch, i, strings.Repeat("x", i%37))})
	}
	return recs
}

// produce produces a batch synchronously.
func (e *outageEnv) produce(batch string, n int) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res := e.producer.ProduceSync(ctx, e.records(batch, n)...)
	require.NoError(e.t, res.FirstErr())
	for _, r := range res {
		e.delivered(r.Record)
	}
}

// produceAsync buffers a batch in the producer and returns a channel that
// gets the batch's first error (or nil) once every record is delivered.
func (e *outageEnv) produceAsync(batch string, n int) <-chan error {
	recs := e.records(batch, n)
	done := make(chan error, 1)
	var mu sync.Mutex
	left, first := len(recs), error(nil)
	for _, r := range recs {
		e.producer.Produce(context.Background(), r, func(r *kgo.Record, err error) {
			if err == nil {
				e.delivered(r)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = err
			}
			if left--; left == 0 {
				done <- first
			}
		})
	}
	return done
}

func (e *outageEnv) delivered(r *kgo.Record) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.produced[pk{r.Partition, r.Offset}] = r.Value
}

// waitShares waits until each indexer holds its share of the partition
// leases (ceil(P/2)) and one of them the writer lease, all unexpired, and
// returns the leases by scope.
func (e *outageEnv) waitShares(timeout time.Duration) map[string]outageLease {
	e.t.Helper()
	var last string
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		leases := e.leases()
		perNode := map[string]int{}
		writers := 0
		ok := len(leases) == outagePartitions+1
		for _, l := range leases {
			if !l.live {
				ok = false
				continue
			}
			if l.kind == cluster.KindWriter {
				writers++
			} else {
				perNode[l.holder]++
			}
			ok = ok && (l.holder == "ix-1" || l.holder == "ix-2")
		}
		share := (outagePartitions + 1) / 2
		ok = ok && writers == 1 && perNode["ix-1"] == share && perNode["ix-2"] == share
		if ok {
			return leases
		}
		last = fmt.Sprintf("%+v", leases)
		time.Sleep(100 * time.Millisecond)
	}
	e.t.Fatalf("indexers do not hold their shares: %s", last)
	return nil
}

type outageLease struct {
	kind, holder string
	epoch        int64
	live         bool
}

// leases reads the table's leases straight from PostgreSQL.
func (e *outageEnv) leases() map[string]outageLease {
	e.t.Helper()
	rows, err := e.db.Query(context.Background(), `
		SELECT l.scope, l.kind, coalesce(l.holder, ''), l.epoch, coalesce(l.expires_at > now(), false)
		FROM leases l JOIN tables t ON t.id = l.table_id
		WHERE t.namespace = $1 AND t.name = $2`, outageNS, outageTable)
	require.NoError(e.t, err)
	defer rows.Close()
	out := map[string]outageLease{}
	for rows.Next() {
		var scope string
		var l outageLease
		require.NoError(e.t, rows.Scan(&scope, &l.kind, &l.holder, &l.epoch, &l.live))
		out[scope] = l
	}
	require.NoError(e.t, rows.Err())
	return out
}

type outageRange struct {
	partition  int32
	start, end int64
	scope      string
	epoch      int64
}

// ranges reads the table's indexed ranges straight from PostgreSQL.
func (e *outageEnv) ranges() []outageRange {
	e.t.Helper()
	rows, err := e.db.Query(context.Background(), `
		SELECT r.partition, r.start_offset, r.end_offset, r.lease_scope, r.lease_epoch
		FROM ranges r JOIN tables t ON t.id = r.table_id
		WHERE t.namespace = $1 AND t.name = $2 ORDER BY 1, 2`, outageNS, outageTable)
	require.NoError(e.t, err)
	defer rows.Close()
	var out []outageRange
	for rows.Next() {
		var r outageRange
		require.NoError(e.t, rows.Scan(&r.partition, &r.start, &r.end, &r.scope, &r.epoch))
		out = append(out, r)
	}
	require.NoError(e.t, rows.Err())
	return out
}

// committedKeys returns the object keys of the table's committed data
// files, straight from PostgreSQL.
func (e *outageEnv) committedKeys() []string {
	e.t.Helper()
	rows, err := e.db.Query(context.Background(), `
		SELECT d.path FROM data_files d JOIN tables t ON t.id = d.table_id
		WHERE t.namespace = $1 AND t.name = $2 AND d.committed_snapshot_id IS NOT NULL
		ORDER BY d.partition, d.start_offset`, outageNS, outageTable)
	require.NoError(e.t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		require.NoError(e.t, rows.Scan(&p))
		out = append(out, p)
	}
	require.NoError(e.t, rows.Err())
	return out
}

// cached reports whether the server node has key in its disk cache (the
// cache names files by the hex SHA-256 of their key).
func (e *outageEnv) cached(key string) bool {
	sum := sha256.Sum256([]byte(key))
	_, err := os.Stat(filepath.Join(e.server.CacheDir, hex.EncodeToString(sum[:])))
	return err == nil
}

// pickFiles reads one committed data file through the S3 API, so that it
// is cached on its owner, and returns it with its bytes and another
// committed file that nobody has read.
func (e *outageEnv) pickFiles() (cachedKey string, cachedBody []byte, uncachedKey string) {
	e.t.Helper()
	keys := e.committedKeys()
	require.GreaterOrEqual(e.t, len(keys), 2, "committed data files")
	cachedKey, uncachedKey = keys[0], keys[len(keys)-1]
	require.False(e.t, e.cached(cachedKey))
	require.False(e.t, e.cached(uncachedKey))
	st, _, body := outageGet(e.t, e.url("/mink/"+cachedKey))
	require.Equal(e.t, http.StatusOK, st, "read %s: %s", cachedKey, body)
	// The cache copy is written while the build is served (objects): wait for it.
	require.Eventually(e.t, func() bool { return e.cached(cachedKey) }, 10*time.Second, 10*time.Millisecond,
		"a file read through its owner is cached there")
	require.False(e.t, e.cached(uncachedKey))
	return cachedKey, body, uncachedKey
}

// commitTwoBatches produces batches a and b of 200 records, waiting until
// each is committed (the table has several files), and picks a cached and
// an uncached file (pickFiles).
func (e *outageEnv) commitTwoBatches() (cachedKey string, cachedBody []byte, uncachedKey string) {
	e.t.Helper()
	for _, batch := range []string{"a", "b"} {
		e.produce(batch, 200)
		clustertest.WaitCaughtUp(e.t, e.server.URL(), outageNS+"."+outageTable)
	}
	return e.pickFiles()
}

// commits returns the number of the table's append snapshots committed
// by its writer, straight from PostgreSQL: the commits that add records.
// Zero-lag loads commit others, with no lease; an assembly or expiry whose
// files were read from Kafka before a cut may still commit its "replace"
// after it, needing only PostgreSQL, and adds no record.
func (e *outageEnv) commits() int {
	e.t.Helper()
	var n int
	require.NoError(e.t, e.db.QueryRow(context.Background(), `
		SELECT count(*) FROM snapshots s JOIN tables t ON t.id = s.table_id
		WHERE t.namespace = $1 AND t.name = $2 AND s.lease_scope IS NOT NULL
		  AND s.operation = 'append'`, outageNS, outageTable).Scan(&n))
	return n
}

// operations returns the operations of the table's writer snapshots in
// commit order, for failure messages.
func (e *outageEnv) operations() []string {
	e.t.Helper()
	rows, err := e.db.Query(context.Background(), `
		SELECT s.operation || '@' || to_char(s.committed_at, 'HH24:MI:SS.MS')
		FROM snapshots s JOIN tables t ON t.id = s.table_id
		WHERE t.namespace = $1 AND t.name = $2 AND s.lease_scope IS NOT NULL
		ORDER BY s.sequence_number`, outageNS, outageTable)
	require.NoError(e.t, err)
	ops, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(e.t, err)
	return ops
}

// waitNewCommit waits until the table has more than old commits and
// returns when it saw the new one.
func (e *outageEnv) waitNewCommit(old int, timeout time.Duration) time.Time {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if e.commits() > old {
			return time.Now()
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("no new commit within %s", timeout)
	return time.Time{}
}

// requireExact waits until the table is committed up to every produced
// record, scans it with iceberg-go through the server and checks that
// every produced record is in it exactly once, with its value, and
// nothing else.
func (e *outageEnv) requireExact() {
	e.t.Helper()
	e.mu.Lock()
	produced := clustertest.Produced{Topic: outageTopic, Unsure: map[string]bool{}}
	for k, v := range e.produced {
		produced.Records = append(produced.Records, clustertest.Record{Partition: k.partition, Offset: k.offset, Value: v})
	}
	e.mu.Unlock()
	sort.Slice(produced.Records, func(i, j int) bool {
		a, b := produced.Records[i], produced.Records[j]
		return a.Partition < b.Partition || a.Partition == b.Partition && a.Offset < b.Offset
	})
	clustertest.WaitExact(e.t, e.server.URL(), outageNS+"."+outageTable, produced)
}

// get does a GET with a short timeout; a transport error is status 0.
func outageGet(t *testing.T, u string) (int, http.Header, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, []byte(err.Error())
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, body
}

// requireLoadUnavailable checks a table load answer: 503, Retry-After, and the
// spec's ErrorModel.
func requireLoadUnavailable(t *testing.T, st int, h http.Header, body []byte) {
	t.Helper()
	require.Equal(t, http.StatusServiceUnavailable, st, "table load: %s", body)
	require.NotEmpty(t, h.Get("Retry-After"), "Retry-After")
	require.Equal(t, "application/json", h.Get("Content-Type"))
	var em struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    int    `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &em), "ErrorModel: %s", body)
	require.NotNil(t, em.Error, "ErrorModel: %s", body)
	require.Equal(t, "ServiceUnavailableException", em.Error.Type)
	require.Equal(t, http.StatusServiceUnavailable, em.Error.Code)
	require.NotEmpty(t, em.Error.Message)
}

// requireS3SlowDown checks an S3 answer: 503 SlowDown (XML) with Retry-After.
func requireS3SlowDown(t *testing.T, key string, st int, h http.Header, body []byte) {
	t.Helper()
	require.Equal(t, http.StatusServiceUnavailable, st, "read %s: %s", key, body)
	require.NotEmpty(t, h.Get("Retry-After"), "Retry-After")
	require.Equal(t, "application/xml", h.Get("Content-Type"))
	var e struct {
		XMLName xml.Name `xml:"Error"`
		Code    string   `xml:"Code"`
		Key     string   `xml:"Key"`
	}
	require.NoError(t, xml.Unmarshal(body, &e), "S3 error: %s", body)
	require.Equal(t, "SlowDown", e.Code)
	require.Equal(t, key, e.Key)
}

func outageStatus(t *testing.T, u string) int {
	t.Helper()
	st, _, _ := outageGet(t, u)
	return st
}

// TestPostgresOutage: docs/design.md §3.4, "Postgres unreachable": table loads and
// reads of files not in the owner's cache answer 503; cached files are
// still served; indexers and writers stop (within the trust window); once
// Postgres answers every node takes its share again, without a restart.
func TestPostgresOutage(t *testing.T) {
	env := clustertest.New(t)
	proxy, nodePG := env.PostgresProxy()
	e := startOutageEnv(t, env, nodePG)
	before := e.waitShares(20 * time.Second)
	cachedKey, cachedBody, uncachedKey := e.commitTwoBatches()
	commits := e.commits()
	loadURL := e.url("/v1/namespaces/" + outageNS + "/tables/" + outageTable)

	// --- Postgres goes away ---
	cut := time.Now()
	proxy.Cut()

	// Table loads answer 503 at once, on every node.
	var first503 time.Duration
	for {
		st, h, body := outageGet(t, loadURL)
		if st == http.StatusServiceUnavailable {
			first503 = time.Since(cut)
			requireLoadUnavailable(t, st, h, body)
			break
		}
		require.Less(t, time.Since(cut), 5*time.Second, "table load still answers %d: %s", st, body)
		time.Sleep(20 * time.Millisecond)
	}
	for _, n := range e.nodes() {
		st, h, body := outageGet(t, n.URL()+"/v1/namespaces/"+outageNS+"/tables/"+outageTable)
		requireLoadUnavailable(t, st, h, body)
	}

	// A data file that is not cached cannot be built: 503 SlowDown.
	start := time.Now()
	st, h, body := outageGet(t, e.url("/mink/"+uncachedKey))
	uncached503 := time.Since(start)
	requireS3SlowDown(t, uncachedKey, st, h, body)
	require.Less(t, uncached503, 5*time.Second)

	// The cached one is still served, byte for byte.
	st, _, body = outageGet(t, e.url("/mink/"+cachedKey))
	require.Equal(t, http.StatusOK, st, "cached file: %s", body)
	require.Equal(t, cachedBody, body)

	// Records produced during the outage are indexed once it ends.
	e.produce("c", 200)

	// Indexers and writers stop within the trust window: lease_ttl minus
	// the safety margin after the start of the last successful renewal,
	// which was before the cut.
	const stopped = "cluster: trust window ended without a renewal; jobs stopped"
	stopAt := map[string]time.Duration{}
	require.Eventually(t, func() bool {
		for _, n := range e.indexers {
			if at, ok := firstLog(n, stopped, cut); ok {
				stopAt[n.ID] = at.Sub(cut)
			}
		}
		return len(stopAt) == len(e.indexers)
	}, outageTTL+2*time.Second, 20*time.Millisecond, "indexers did not stop their jobs: %v", stopAt)
	for id, d := range stopAt {
		// The window ends at most TTL-margin after the cut; the slack
		// covers the timer firing late on a loaded machine. Leases in the
		// database expire TTL after that renewal at the earliest.
		require.Less(t, d, outageTTL-outageMargin+300*time.Millisecond, "node %s stopped its jobs %s after the cut", id, d)
	}
	for _, n := range e.nodes() {
		require.Equal(t, http.StatusServiceUnavailable, outageStatus(t, n.URL()+"/readyz"), "node %s /readyz", n.ID)
	}

	// No range was recorded since the cut, and none can be (the leases
	// the indexers held have expired by now).
	frozen := e.ranges()
	require.Eventually(t, func() bool {
		for _, l := range e.leases() {
			if l.live {
				return false
			}
		}
		return true
	}, 2*outageTTL, 50*time.Millisecond, "leases expire while nobody can renew them")
	require.Equal(t, frozen, e.ranges(), "ranges recorded during the outage")

	// Still 503 for the uncached file and the load, still 200 for the
	// cached one, after the jobs stopped.
	st, h, body = outageGet(t, loadURL)
	requireLoadUnavailable(t, st, h, body)
	st, h, body = outageGet(t, e.url("/mink/"+uncachedKey))
	requireS3SlowDown(t, uncachedKey, st, h, body)
	st, _, body = outageGet(t, e.url("/mink/"+cachedKey))
	require.Equal(t, http.StatusOK, st)
	require.Equal(t, cachedBody, body)
	outage := time.Since(cut)

	// --- Postgres is back ---
	restore := time.Now()
	proxy.Restore()
	require.Eventually(t, func() bool {
		for _, n := range e.nodes() {
			if outageStatus(t, n.URL()+"/readyz") != http.StatusOK {
				return false
			}
		}
		return true
	}, 10*time.Second, 50*time.Millisecond, "nodes ready again")
	ready := time.Since(restore)
	committed := e.waitNewCommit(commits, 20*time.Second).Sub(restore)
	after := e.waitShares(20 * time.Second)
	shares := time.Since(restore)
	clustertest.WaitCaughtUp(t, e.server.URL(), outageNS+"."+outageTable)

	// Every lease was taken again under a new epoch; every range recorded
	// since carries one (the old epochs are fenced).
	for scope, l := range after {
		require.Greater(t, l.epoch, before[scope].epoch, "lease %s taken again under a new epoch", scope)
	}
	ended := map[int32]int64{}
	for _, r := range frozen {
		ended[r.partition] = max(ended[r.partition], r.end)
	}
	newRanges := 0
	for _, r := range e.ranges() {
		if r.start >= ended[r.partition] {
			newRanges++
			require.Greater(t, r.epoch, before[r.scope].epoch, "range %+v recorded under an old epoch", r)
		}
	}
	require.Positive(t, newRanges, "indexing resumed")

	st, _, body = outageGet(t, e.url("/mink/"+uncachedKey))
	require.Equal(t, http.StatusOK, st, "uncached file after restore: %s", body)
	e.requireExact()

	t.Logf("postgres outage: cut→503 on table load %s; uncached read 503 in %s; jobs stopped %v after the cut "+
		"(trust window %s); outage %s; restore→ready %s, →first new commit %s, →every share held %s",
		first503.Round(time.Millisecond), uncached503.Round(time.Millisecond), outageDurations(stopAt),
		outageTTL-outageMargin, outage.Round(time.Millisecond), ready.Round(time.Millisecond),
		committed.Round(time.Millisecond), shares.Round(time.Millisecond))
}

// TestKafkaOutage: docs/design.md §3.4, "Kafka unreachable": table loads (which
// read the last stable offsets for the zero-lag tail, §4.4), builds and
// indexing fail until Kafka answers; cached files are still served.
func TestKafkaOutage(t *testing.T) {
	var sw netproxy.Switch
	env := clustertest.New(t, clustertest.KafkaListenFn(sw.Listen))
	e := startOutageEnv(t, env, "")
	e.waitShares(20 * time.Second)
	cachedKey, cachedBody, uncachedKey := e.commitTwoBatches()
	commits := e.commits()
	loadURL := e.url("/v1/namespaces/" + outageNS + "/tables/" + outageTable)
	frozen := e.ranges()

	// --- Kafka goes away ---
	cut := time.Now()
	sw.Cut()
	// Produced during the outage: buffered by the producer, delivered
	// once Kafka is back.
	during := e.produceAsync("c", 200)

	// Table loads read the last stable offsets from Kafka (zero-lag,
	// docs/design.md §4.4): they answer 503, quickly.
	start := time.Now()
	st, h, body := outageGet(t, loadURL)
	loadTime := time.Since(start)
	requireLoadUnavailable(t, st, h, body)
	require.Less(t, loadTime, 8*time.Second, "a table load must give up quickly while Kafka is down")

	// Building a file that is not cached fails, fast, with 503 SlowDown.
	start = time.Now()
	st, h, body = outageGet(t, e.url("/mink/"+uncachedKey))
	uncached503 := time.Since(start)
	requireS3SlowDown(t, uncachedKey, st, h, body)
	require.Less(t, uncached503, 8*time.Second, "a build must give up quickly while Kafka is down")
	require.False(t, e.cached(uncachedKey))

	// The cached file is still served.
	st, _, body = outageGet(t, e.url("/mink/"+cachedKey))
	require.Equal(t, http.StatusOK, st, "cached file: %s", body)
	require.Equal(t, cachedBody, body)

	// Indexing stalls: nothing is delivered, nothing is recorded.
	time.Sleep(max(0, 2*time.Second-time.Since(cut)))
	select {
	case err := <-during:
		t.Fatalf("records were delivered while Kafka is cut (err %v)", err)
	default:
	}
	require.Equal(t, frozen, e.ranges(), "ranges recorded during the outage")
	require.Equal(t, commits, e.commits(), "appends during the outage (cut at %s; writer snapshots %v)",
		cut.UTC().Format("15:04:05.000"), e.operations())
	// A second read of the uncached file fails the same way (no cached
	// failure, no hang).
	start = time.Now()
	st, h, body = outageGet(t, e.url("/mink/"+uncachedKey))
	requireS3SlowDown(t, uncachedKey, st, h, body)
	uncached503b := time.Since(start)
	outage := time.Since(cut)

	// --- Kafka is back ---
	restore := time.Now()
	sw.Restore()
	select {
	case err := <-during:
		require.NoError(t, err, "records buffered during the outage are delivered")
	case <-time.After(20 * time.Second):
		t.Fatal("records buffered during the outage were not delivered")
	}
	delivered := time.Since(restore)
	committed := e.waitNewCommit(commits, 20*time.Second).Sub(restore)
	clustertest.WaitCaughtUp(t, e.server.URL(), outageNS+"."+outageTable)
	e.produce("d", 100)
	clustertest.WaitCaughtUp(t, e.server.URL(), outageNS+"."+outageTable)

	st, _, body = outageGet(t, e.url("/mink/"+uncachedKey))
	require.Equal(t, http.StatusOK, st, "uncached file after restore: %s", body)
	e.requireExact()

	t.Logf("kafka outage: table load during the outage 503 in %s; uncached read 503 in %s, again in %s; "+
		"outage %s; restore→buffered records delivered %s, →first new commit %s",
		loadTime.Round(time.Millisecond), uncached503.Round(time.Millisecond), uncached503b.Round(time.Millisecond),
		outage.Round(time.Millisecond), delivered.Round(time.Millisecond), committed.Round(time.Millisecond))
}

func outageDurations(m map[string]time.Duration) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s ", k, m[k].Round(time.Millisecond))
	}
	return strings.TrimSpace(b.String())
}
