package objects

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/singleflight"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/outage"
	"github.com/minkhq/mink/tables"
)

// ForwardedHeader marks a data file read forwarded to its owner; its value
// is the id of the node that forwarded it, and the request carries that
// node's signature (auth.SignForward). A node serves a marked read that
// verifies itself (cache or build) whatever its own view of the owner is,
// so a read is forwarded at most once, even while two nodes' views
// disagree; one that does not verify answers 403 AccessDenied.
const ForwardedHeader = auth.ForwardedHeader

// dataFileModTime is the Last-Modified of every data file. A data file's
// bytes are a pure function of its key (docs/design.md §4.5), the same on every
// node and every rebuild, so its Last-Modified must be too, or a
// conditional request would get different answers from different nodes.
// No time of day describes such a file better than a fixed one.
var dataFileModTime = time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC)

// Content types of the files served.
const (
	contentTypeJSON   = "application/json"
	contentTypeBinary = "application/octet-stream"
)

// Server is one node's S3-compatible read API (docs/design.md §5): metadata files
// from PostgreSQL, data files from the disk cache, their owner, or a build.
type Server struct {
	cfg     Config
	pool    *pgxpool.Pool
	builder Builder
	members func() []cluster.Member
	log     *slog.Logger
	// verifier checks every request's signature; nil under auth.ModeNone.
	verifier *auth.Verifier
	// locations is the view of the live tables: a key is served only
	// below one (a deleted table's files are not, cached or not).
	locations *tables.Locations
	// senders checks that a forwarded read's sender is a live member.
	senders *cluster.Senders
	running sync.WaitGroup // the locations' refresh loop

	cache     *diskCache
	meta      *memoryCache
	builds    singleflight.Group // data file builds, by key
	metaReads singleflight.Group // metadata file reads, by key
	client    *http.Client       // to owners
	counters  counters
	metrics   *metrics
	ctx       context.Context // cancelled by Close; builds run under it
	cancel    context.CancelFunc
	closed    atomic.Bool
	downMu    sync.Mutex
	downUntil map[string]time.Time // owner id → end of its forwarding backoff

	// A build is served from memory while its copy is written to the
	// cache in the background: the first reader does not wait for the
	// disk. pending holds it until the cache has it.
	pendMu       sync.Mutex
	pending      map[string]*built
	storesClosed bool           // Close has begun: stores are synchronous
	stores       sync.WaitGroup // background stores in flight
}

// New returns the S3 API of one node. pool reads metadata files; builder
// builds data files on a cache miss; members returns the node's last view
// of the cluster's live members (kept while PostgreSQL is down), used to
// find each data file's owner. A nil members means this node is alone: it
// owns every file. The cache directory is cleared.
func New(cfg Config, pool *pgxpool.Pool, builder Builder, members func() []cluster.Member) (*Server, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if pool == nil {
		return nil, errors.New("objects: a PostgreSQL pool is required")
	}
	if builder == nil {
		return nil, errors.New("objects: a Builder is required")
	}
	if members == nil {
		members = func() []cluster.Member { return nil }
	}
	var verifier *auth.Verifier
	if cfg.Auth == auth.ModePrincipals {
		if len(cfg.CredentialsKey) < 16 {
			return nil, errors.New("objects: auth mode principals needs the credentials key (16 bytes or more)")
		}
		verifier = &auth.Verifier{Key: cfg.CredentialsKey, Region: cfg.Region, Active: cfg.Active}
	}
	cache, err := newDiskCache(cfg.CacheDir, cfg.CacheSize)
	if err != nil {
		return nil, err
	}
	s := &Server{
		verifier:  verifier,
		cfg:       cfg,
		pool:      pool,
		builder:   builder,
		members:   members,
		log:       cfg.Logger.With("node_id", cfg.NodeID),
		cache:     cache,
		meta:      newMemoryCache(cfg.MetadataCacheSize),
		client:    &http.Client{Transport: newForwardTransport(cfg)},
		downUntil: map[string]time.Time{},
		pending:   map[string]*built{},
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if s.metrics, err = newMetrics(s, cfg.Registerer); err != nil {
		return nil, err
	}
	s.senders = cluster.NewSenders(pool, members)
	s.locations = tables.NewLocations(pool, cfg.Warehouse, s.log)
	s.locations.Gone = s.dropTable
	s.running.Add(1)
	go func() {
		defer s.running.Done()
		s.locations.Run(s.ctx)
	}()
	return s, nil
}

// Close stops the builds in flight (their readers get 503 SlowDown) and
// answers every later read with 503. Cached files stay on disk until the
// next start clears them.
func (s *Server) Close() {
	if s.closed.Swap(true) {
		return
	}
	s.cancel()
	s.running.Wait()
	s.client.CloseIdleConnections()
	s.pendMu.Lock()
	s.storesClosed = true
	s.pendMu.Unlock()
	s.stores.Wait()
}

// Flush waits until the cache copies of the builds served so far are
// written (a build is served from memory while its copy is written, so
// Stats may lag a read by that write).
func (s *Server) Flush() { s.stores.Wait() }

// Put stores b as the data file at key in this node's cache, so that an
// indexer that has just built a file this node owns saves its first reader
// a build. b must be the file's exact bytes; Put does not check them.
func (s *Server) Put(key string, b []byte) {
	s.store(key, b, etagOf(b))
}

func (s *Server) store(key string, b []byte, etag string) {
	_, evicted, err := s.cache.put(key, b, etag)
	if err != nil {
		s.log.Warn("cannot cache data file", "key", key, "err", err)
	}
	if evicted > 0 {
		s.counters.evictions.Add(uint64(evicted))
		s.metrics.evictions.Add(float64(evicted))
	}
}

func etagOf(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// ServeHTTP answers path-style S3 requests: GET and HEAD of
// /<warehouse>/<key>, and HEAD /<warehouse> (HeadBucket).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("x-amz-request-id", newRequestID())
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s.writeError(w, r, http.StatusMethodNotAllowed, s3Error{Code: codeMethodNotAllowed,
			Message: "The specified method is not allowed against this resource: Mink's S3 API is read-only.", Key: key})
		return
	}
	if s.closed.Load() {
		s.writeError(w, r, http.StatusServiceUnavailable, s3Error{Code: codeSlowDown,
			Message: "This node is shutting down; retry.", Key: key})
		return
	}
	forwarded := false
	if _, marked := r.Header[ForwardedHeader]; marked {
		if !s.forwardAllowed(w, r, key) {
			return
		}
		forwarded = true
	}
	if !forwarded && s.verifier != nil && !s.authorized(w, r, bucket, key) {
		return
	}
	switch {
	case bucket == "":
		s.writeError(w, r, http.StatusNotImplemented, s3Error{Code: codeNotImplemented,
			Message: "Listing buckets is not supported."})
		return
	case bucket != s.cfg.Warehouse:
		s.writeError(w, r, http.StatusNotFound, s3Error{Code: codeNoSuchBucket,
			Message: "The specified bucket does not exist.", BucketName: bucket})
		return
	case key == "" && r.Method == http.MethodHead:
		w.WriteHeader(http.StatusOK) // HeadBucket
		return
	case key == "":
		s.writeError(w, r, http.StatusNotImplemented, s3Error{Code: codeNotImplemented,
			Message: "Listing objects is not supported.", BucketName: bucket})
		return
	}
	kind := classify(key)
	if kind != kindNone && !s.tableLive(w, r, key, kind) {
		return
	}
	switch kind {
	case kindMetadata:
		s.serveMetadata(w, r, key)
	case kindData:
		s.serveData(w, r, key, forwarded)
	default:
		s.noSuchKey(w, r, key)
	}
}

// tableLive checks that key (of kind) lies below a live table's location,
// under every auth mode and for forwarded reads too: a deleted table's
// files answer 404 NoSuchKey on every node, cached or not, once its
// delete has committed and tables.LocationsTTL has passed. A fresh view
// of the locations answers from memory, so a cached read still queries
// nothing. When the view is stale and PostgreSQL cannot be read, a node
// under auth.ModeNone serves by its last view (cached files stay readable
// while PostgreSQL is down, docs/design.md §3.4); under
// auth.ModePrincipals it answers 503 SlowDown, as the principal's check
// does then (and so does a node under auth.ModeNone for a key its last
// view does not hold). When it may not serve, tableLive answers and returns false.
func (s *Server) tableLive(w http.ResponseWriter, r *http.Request, key string, kind objectKind) bool {
	tk := tableKey(key, kind)
	if s.locations.LiveNow(tk) {
		return true
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.QueryTimeout)
	defer cancel()
	live, last, err := s.locations.Live(ctx, tk)
	switch {
	case err == nil && live:
		return true
	case err == nil:
		s.noSuchKey(w, r, key)
		return false
	case s.verifier == nil && last:
		return true
	}
	s.log.Warn("cannot check the table is live", "key", key, "err", err)
	s.writeError(w, r, http.StatusServiceUnavailable, s3Error{Code: codeSlowDown,
		Message: "PostgreSQL is unavailable and this table cannot be checked now; retry.", Key: key})
	return false
}

// tableKey is the key of the table location a file key lies below:
// the key without its last two segments (metadata/<file>) or three
// (data/<partition>/<file>), as classify found them.
func tableKey(key string, kind objectKind) string {
	n := 2
	if kind == kindData {
		n = 3
	}
	for ; n > 0; n-- {
		key = key[:strings.LastIndexByte(key, '/')]
	}
	return key
}

// dropTable drops the cached files of a deleted table's location (key
// below the warehouse): they are never served again (tableLive), and the
// location is never given out again.
func (s *Server) dropTable(key string) {
	prefix := key + "/"
	n := s.cache.removePrefix(prefix) + s.meta.removePrefix(prefix)
	s.log.Info("dropped the cached files of a deleted table", "location_key", key, "files", n)
}

// forwardAllowed checks a read marked forwarded: signed by the cluster's
// forward key for this node (auth.VerifyForward), by a node that is a
// live member (cluster.Senders: this node's view, else PostgreSQL): a
// node that left, or an id that never joined, holds the key but is not
// the cluster. Otherwise it answers 403 AccessDenied (503 SlowDown when
// the membership cannot be read) and returns false.
func (s *Server) forwardAllowed(w http.ResponseWriter, r *http.Request, key string) bool {
	from, err := auth.VerifyForward(s.cfg.ForwardKey, r, s.cfg.NodeID)
	if err != nil {
		s.log.Warn("refused a read marked forwarded", "key", key, "remote", r.RemoteAddr, "err", err)
		s.writeError(w, r, http.StatusForbidden, s3Error{Code: codeAccessDenied,
			Message: "Access Denied: the request is marked forwarded but no node of this cluster signed it.", Key: key})
		return false
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.QueryTimeout)
	defer cancel()
	live, err := s.senders.Live(ctx, from)
	switch {
	case err != nil:
		s.log.Warn("cannot check the forwarding node is a member", "key", key, "from", from, "err", err)
		s.writeError(w, r, http.StatusServiceUnavailable, s3Error{Code: codeSlowDown,
			Message: "The forwarding node cannot be checked now; retry.", Key: key})
		return false
	case !live:
		s.log.Warn("refused a read forwarded by a node that is not a live member", "key", key, "from", from, "remote", r.RemoteAddr)
		s.writeError(w, r, http.StatusForbidden, s3Error{Code: codeAccessDenied,
			Message: "Access Denied: the request was forwarded by a node that is not a member of this cluster.", Key: key})
		return false
	}
	return true
}

// authorized checks r's AWS Signature V4 (auth.Verifier) and that its
// credentials may read key of bucket: the warehouse, a key below one of
// their prefixes (a bucket-level request reads no table's key). When they
// may not, it answers the S3 error and returns false.
//
// A read forwarded by a node of the cluster (auth.VerifyForward) is not
// checked again: the node that forwarded it did.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request, bucket, key string) bool {
	c, err := s.verifier.Verify(r, time.Now())
	var e *auth.S3Error
	switch {
	case errors.As(err, &e):
		s.log.Debug("S3 request refused", "code", e.Code, "reason", e.Message, "key", key)
		s.metrics.denied.WithLabelValues(e.Code).Inc()
		s.writeError(w, r, e.Status, s3Error{Code: e.Code, Message: e.Message, Key: key})
		return false
	case err != nil:
		s.log.Warn("cannot check the credentials' principal", "key", key, "err", err)
		s.writeError(w, r, http.StatusServiceUnavailable, s3Error{Code: codeSlowDown,
			Message: "The credentials' principal cannot be checked now; retry.", Key: key})
		return false
	case bucket != s.cfg.Warehouse || !c.AllowsKey(key):
		s.log.Debug("S3 request refused: key outside the credentials' prefixes", "principal", c.Principal, "bucket", bucket, "key", key)
		s.metrics.denied.WithLabelValues(auth.CodeAccessDenied).Inc()
		s.writeError(w, r, http.StatusForbidden, s3Error{Code: auth.CodeAccessDenied,
			Message: "Access Denied: these credentials do not cover this key.", BucketName: bucket, Key: key})
		return false
	}
	return true
}

func (s *Server) noSuchKey(w http.ResponseWriter, r *http.Request, key string) {
	s.writeError(w, r, http.StatusNotFound, s3Error{Code: codeNoSuchKey,
		Message: "The specified key does not exist.", Key: key})
}

type objectKind int

const (
	kindNone objectKind = iota
	kindMetadata
	kindData
)

// classify tells a metadata file key (<ns>/<name>/metadata/<file>) from a
// data file key (<ns>/<name>/data/<partition>/<file>.parquet); namespace
// levels are joined with '/'. Anything else cannot exist, nor can a key
// PostgreSQL's text cannot hold (U+0000, invalid UTF-8): asking it would
// fail, not find nothing.
func classify(key string) objectKind {
	if !utf8.ValidString(key) || strings.IndexByte(key, 0) >= 0 {
		return kindNone
	}
	// One pass over the segments, keeping the last three (last[0] is the
	// last): no allocation on a path every request takes.
	var last [3]string
	n := 0
	for rest, more := key, true; more; n++ {
		var seg string
		seg, rest, more = strings.Cut(rest, "/")
		if seg == "" || seg == "." || seg == ".." {
			return kindNone
		}
		last[2], last[1], last[0] = last[1], last[0], seg
	}
	switch {
	case n >= 4 && last[1] == "metadata":
		return kindMetadata
	case n >= 5 && last[2] == "data" && isDigits(last[1]) && strings.HasSuffix(last[0], ".parquet"):
		return kindData
	}
	return kindNone
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// serveMetadata answers a metadata file from memory, or from PostgreSQL.
// Any node serves them; they are never forwarded.
func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request, key string) {
	m, ok := s.meta.get(key)
	if ok {
		s.counters.metadataHits.Add(1)
		s.metrics.metaHits.Inc()
	} else {
		s.counters.metadataMisses.Add(1)
		s.metrics.metaMis.Inc()
		// The read is shared by every reader waiting for key, so it must
		// not end when the first of them goes away; QueryTimeout bounds it.
		ctx := context.WithoutCancel(r.Context())
		v, err, _ := s.metaReads.Do(key, func() (any, error) {
			m, err := s.readMetadataFile(ctx, key)
			if err == nil {
				s.meta.put(m)
			}
			return m, err
		})
		switch {
		case errors.Is(err, errNoMetadataFile):
			s.noSuchKey(w, r, key)
			return
		case errors.Is(err, outage.ErrUnavailable):
			s.log.Warn("metadata file unavailable", "key", key, "err", err)
			s.writeError(w, r, http.StatusServiceUnavailable, s3Error{Code: codeSlowDown,
				Message: "PostgreSQL is unavailable and this metadata file is not cached here; retry.", Key: key})
			return
		case err != nil:
			s.log.Error("metadata file read failed", "key", key, "err", err)
			s.writeError(w, r, http.StatusInternalServerError, s3Error{Code: codeInternalError,
				Message: "Reading the metadata file failed.", Key: key})
			return
		}
		m = v.(*metadataFile)
	}
	ctype := contentTypeBinary
	if strings.HasSuffix(key, ".json") {
		ctype = contentTypeJSON
	}
	s.serveContent(w, r, key, sourceMetadata, ctype, m.modTime, m.etag, bytes.NewReader(m.content), int64(len(m.content)))
}

// serveData answers a data file: from this node's cache when it has it;
// else from the owner when another node owns it; else (this node owns it,
// the read was forwarded here, or the owner did not answer in time) by
// building it here, once however many readers wait. forwarded is true
// for a read another node signed (ServeHTTP verified it).
func (s *Server) serveData(w http.ResponseWriter, r *http.Request, key string, forwarded bool) {
	// A cached copy is served wherever it is: its bytes are the same on
	// every node, and a hop saved is latency saved.
	if cf, ok := s.cache.open(key); ok {
		defer cf.f.Close()
		s.counters.hits.Add(1)
		s.metrics.hits.Inc()
		s.serveContent(w, r, key, sourceCache, contentTypeBinary, dataFileModTime, cf.etag, &sizedFile{f: cf.f, size: cf.size}, cf.size)
		return
	}
	if !forwarded {
		if owner, ok := s.remoteOwner(key); ok && s.forward(w, r, key, owner) {
			return
		}
	}
	if b, ok := s.pendingBuild(key); ok {
		// Built a moment ago; its cache copy is still being written.
		s.counters.hits.Add(1)
		s.metrics.hits.Inc()
		s.serveContent(w, r, key, sourceCache, contentTypeBinary, dataFileModTime, b.etag, bytes.NewReader(b.data), int64(len(b.data)))
		return
	}
	s.counters.misses.Add(1)
	s.metrics.misses.Inc()

	ch := s.builds.DoChan(key, func() (any, error) { return s.build(key) })
	var res singleflight.Result
	select {
	case res = <-ch:
	case <-r.Context().Done():
		return // the client went away; the build goes on and is cached
	}
	if res.Err != nil {
		s.buildError(w, r, key, res.Err)
		return
	}
	b := res.Val.(*built)
	s.serveContent(w, r, key, sourceBuild, contentTypeBinary, dataFileModTime, b.etag, bytes.NewReader(b.data), int64(len(b.data)))
}

// built is the outcome of one build, shared by every reader that waited.
type built struct {
	data []byte
	etag string
}

// build builds key and caches it. It runs once per key at a time (the
// singleflight group), under the server's context rather than a reader's,
// since every waiting reader shares it.
//
// Every node caches what it builds, owner or not. On a non-owner this only
// happens when the owner did not answer, and a reader of a Parquet file
// then sends several range reads (footer, then column chunks): without a
// copy, each would wait for the dead owner and rebuild the whole file. The
// copy can never be wrong, since the bytes are the same everywhere; it only
// costs disk until the LRU evicts it.
func (s *Server) build(key string) (*built, error) {
	// A reader that missed the cache just before the previous flight of
	// key stored it would otherwise start a second build.
	if cf, ok := s.cache.open(key); ok {
		defer cf.f.Close()
		if b, err := io.ReadAll(cf.f); err == nil {
			return &built{data: b, etag: cf.etag}, nil
		}
	}
	if b, ok := s.pendingBuild(key); ok {
		return b, nil
	}
	s.counters.builds.Add(1)
	start := time.Now()
	b, etag, err := s.callBuilder(key)
	s.metrics.buildSeconds.WithLabelValues(buildResult(err)).Observe(time.Since(start).Seconds())
	if err != nil {
		s.counters.buildErrors.Add(1)
		return nil, err
	}
	s.log.Debug("built data file", "key", key, "bytes", len(b), "seconds", time.Since(start).Seconds())
	res := &built{data: b, etag: etag}
	s.pendMu.Lock()
	if s.storesClosed {
		s.pendMu.Unlock()
		s.store(key, b, etag)
		return res, nil
	}
	s.pending[key] = res
	s.stores.Add(1)
	s.pendMu.Unlock()
	go func() {
		defer s.stores.Done()
		s.store(key, b, etag)
		s.pendMu.Lock()
		delete(s.pending, key)
		s.pendMu.Unlock()
	}()
	return res, nil
}

// pendingBuild returns the build of key whose cache copy is being written.
func (s *Server) pendingBuild(key string) (*built, bool) {
	s.pendMu.Lock()
	defer s.pendMu.Unlock()
	b, ok := s.pending[key]
	return b, ok
}

// callBuilder calls the Builder, turning a panic into an error: a panic in
// a singleflight.DoChan function would be re-raised on a goroutine of its
// own and take the whole node down for one file.
//
// It returns the bytes and their ETag: the SumBuilder's checksum when the
// Builder is one, else a hash of the bytes.
func (s *Server) callBuilder(key string) (b []byte, etag string, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("builder panicked", "key", key, "panic", p, "stack", string(debug.Stack()))
			b, etag, err = nil, "", fmt.Errorf("objects: builder panicked: %v", p)
		}
	}()
	if sb, ok := s.builder.(SumBuilder); ok {
		b, sum, err := sb.BuildSum(s.ctx, key)
		if err != nil {
			return nil, "", err
		}
		return b, `"` + hex.EncodeToString(sum[:]) + `"`, nil
	}
	b, err = s.builder.Build(s.ctx, key)
	if err != nil {
		return nil, "", err
	}
	return b, etagOf(b), nil
}

func buildResult(err error) string {
	switch {
	case err == nil:
		return resultOK
	case errors.Is(err, ErrNotFound):
		return resultNotFound
	case errors.Is(err, ErrChecksumMismatch):
		return resultChecksumMismatch
	case errors.Is(err, outage.ErrUnavailable):
		return resultUnavailable
	}
	return resultError
}

// buildError answers a failed build with its S3 error.
func (s *Server) buildError(w http.ResponseWriter, r *http.Request, key string, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
		s.noSuchKey(w, r, key)
	case errors.Is(err, ErrChecksumMismatch):
		s.log.Error("rebuilt data file differs from its recorded checksum; not served", "key", key, "err", err)
		s.writeError(w, r, http.StatusInternalServerError, s3Error{Code: codeInternalError,
			Message: "The rebuilt data file differs from its recorded checksum (its records changed in Kafka); it is not served.", Key: key})
	case errors.Is(err, outage.ErrUnavailable), s.ctx.Err() != nil:
		s.log.Warn("cannot build data file", "key", key, "err", err)
		s.writeError(w, r, http.StatusServiceUnavailable, s3Error{Code: codeSlowDown,
			Message: "PostgreSQL or Kafka is unavailable and this data file is not cached here; retry.", Key: key})
	default:
		// The cause goes to the log, under the request id the reader
		// gets: its text (offsets, sizes) may hold "301", which older
		// gocloud.dev readers take for a missing bucket (newRequestID).
		s.log.Error("data file build failed", "key", key, "request_id", w.Header().Get("x-amz-request-id"), "err", err)
		s.writeError(w, r, http.StatusInternalServerError, s3Error{Code: codeInternalError,
			Message: "Building the data file failed; the node's log has the cause under this request id.", Key: key})
	}
}

// serveContent answers GET and HEAD, with conditional and Range requests,
// from content of size bytes: http.ServeContent evaluates the
// preconditions in the order of RFC 9110 §13.2.2 (If-Match,
// If-Unmodified-Since, If-None-Match, If-Modified-Since, If-Range) and
// serves the range, after normalizeRequest has read the Range header by
// RFC 9110 §14. HEAD gets the status and headers GET would get (206 and
// 416 included), as S3's HeadObject does; RFC 9110 §14.2 leaves range
// handling of methods other than GET to other specifications.
func (s *Server) serveContent(w http.ResponseWriter, r *http.Request, key, source, ctype string, modTime time.Time, etag string, content io.ReadSeeker, size int64) {
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("ETag", etag)
	h.Set("Accept-Ranges", "bytes")
	sw := &serveWriter{ResponseWriter: w, s: s, r: r, key: key}
	http.ServeContent(sw, normalizeRequest(r, size), "", modTime, content)
	s.served(source, sw.n)
}

// sizedFile is an open cached data file whose size the cache index knows.
// It answers Seek without a system call and moves the descriptor's offset
// only when the body is read, so http.ServeContent's seeks (to the end for
// the size, back to the start, to the range's first byte) cost one lseek
// at most; serveWriter.ReadFrom hands the *os.File itself to the
// connection, so the body still goes by sendfile.
type sizedFile struct {
	f    *os.File
	size int64
	pos  int64 // the reader's offset
	at   int64 // the descriptor's offset
}

var errSeek = errors.New("objects: invalid seek")

func (sf *sizedFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += sf.pos
	case io.SeekEnd:
		offset += sf.size
	default:
		return sf.pos, errSeek
	}
	if offset < 0 {
		return sf.pos, errSeek
	}
	sf.pos = offset
	return offset, nil
}

// sync moves the descriptor to the reader's offset.
func (sf *sizedFile) sync() error {
	if sf.pos == sf.at {
		return nil
	}
	if _, err := sf.f.Seek(sf.pos, io.SeekStart); err != nil {
		return err
	}
	sf.at = sf.pos
	return nil
}

func (sf *sizedFile) Read(p []byte) (int, error) {
	if err := sf.sync(); err != nil {
		return 0, err
	}
	n, err := sf.f.Read(p)
	sf.pos += int64(n)
	sf.at = sf.pos
	return n, err
}

// serveWriter counts body bytes and turns the plain-text errors of
// http.ServeContent (416, 412) into S3 XML errors. It passes ReadFrom
// through so a cached file is still sent with sendfile.
type serveWriter struct {
	http.ResponseWriter
	s       *Server
	r       *http.Request
	key     string
	n       int64
	swallow bool // ServeContent's own error body is dropped
}

func (w *serveWriter) WriteHeader(code int) {
	var e s3Error
	switch code {
	case http.StatusRequestedRangeNotSatisfiable:
		e = s3Error{Code: codeInvalidRange, Message: "The requested range is not satisfiable.", Key: w.key}
	case http.StatusPreconditionFailed:
		e = s3Error{Code: codePreconditionFailed, Message: "At least one of the preconditions you specified did not hold.", Key: w.key}
	default:
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.Header().Del("X-Content-Type-Options")
	w.s.writeError(w.ResponseWriter, w.r, code, e)
	w.swallow = true
}

func (w *serveWriter) Write(p []byte) (int, error) {
	if w.swallow {
		return len(p), nil
	}
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *serveWriter) ReadFrom(src io.Reader) (int64, error) {
	if w.swallow {
		return io.Copy(io.Discard, src)
	}
	// A cached file goes to the connection as the *os.File it is, so
	// that the connection's ReadFrom can use sendfile.
	var sf *sizedFile
	lr, limited := src.(*io.LimitedReader)
	if limited {
		if f, ok := lr.R.(*sizedFile); ok {
			sf, src = f, &io.LimitedReader{R: f.f, N: lr.N}
		}
	} else if f, ok := src.(*sizedFile); ok {
		sf, src = f, f.f
	}
	if sf != nil {
		if err := sf.sync(); err != nil {
			return 0, err
		}
	}
	// io.Copy uses the underlying ResponseWriter's ReadFrom (sendfile).
	n, err := io.Copy(w.ResponseWriter, src)
	w.n += n
	if sf != nil {
		sf.pos += n
		sf.at = sf.pos
		if limited {
			lr.N -= n
		}
	}
	return n, err
}

func (w *serveWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
