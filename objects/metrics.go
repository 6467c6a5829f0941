package objects

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Stats are a node's S3 API counters since start, for the admin API (node
// cache stats, docs/design.md §5).
type Stats struct {
	// Hits and Misses count data file reads served by this node from its
	// disk cache, or not found there.
	Hits   uint64 `json:"hits"`
	Misses uint64 `json:"misses"`
	// Builds counts calls to the Builder; BuildErrors those that failed.
	Builds      uint64 `json:"builds"`
	BuildErrors uint64 `json:"build_errors"`
	// Evictions counts data files evicted from the disk cache.
	Evictions uint64 `json:"evictions"`
	// Files and Bytes are what the disk cache holds now; Capacity its bound.
	Files    int   `json:"files"`
	Bytes    int64 `json:"bytes"`
	Capacity int64 `json:"capacity"`
	// Forwards counts data file reads forwarded to their owner;
	// ForwardFailures those the owner did not answer in time, built here.
	Forwards        uint64 `json:"forwards"`
	ForwardFailures uint64 `json:"forward_failures"`
	// MetadataHits and MetadataMisses count metadata file reads found in
	// memory or read from PostgreSQL.
	MetadataHits   uint64 `json:"metadata_hits"`
	MetadataMisses uint64 `json:"metadata_misses"`
	// BytesServed counts response body bytes written to clients.
	BytesServed uint64 `json:"bytes_served"`
}

// counters are the atomics behind Stats and the Prometheus metrics.
type counters struct {
	hits, misses, builds, buildErrors, evictions atomic.Uint64
	forwards, forwardFailures                    atomic.Uint64
	metadataHits, metadataMisses, bytesServed    atomic.Uint64
}

// metrics are the Prometheus side of the counters.
type metrics struct {
	hits, misses      prometheus.Counter
	metaHits, metaMis prometheus.Counter
	evictions         prometheus.Counter
	buildSeconds      *prometheus.HistogramVec
	forwards          *prometheus.CounterVec
	bytesServed       *prometheus.CounterVec
	denied            *prometheus.CounterVec
	// servedBy holds bytesServed's counter of each source, looked up once
	// rather than on every response.
	servedBy map[string]prometheus.Counter
}

// Values of the labels of the Prometheus metrics.
const (
	// result of mink_objects_build_seconds
	resultOK               = "ok"
	resultNotFound         = "not_found"
	resultChecksumMismatch = "checksum_mismatch"
	resultUnavailable      = "unavailable"
	resultError            = "error"

	// result of mink_objects_forwards_total
	forwardAnswered = "answered"
	forwardFailed   = "failed"

	// source of mink_objects_served_bytes_total
	sourceMetadata  = "metadata"
	sourceCache     = "cache"
	sourceBuild     = "build"
	sourceForwarded = "forwarded"
)

func newMetrics(s *Server, reg prometheus.Registerer) (*metrics, error) {
	const ns, sub = "mink", "objects"
	m := &metrics{
		hits: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "cache_hits_total", Help: "Data file reads served from this node's disk cache."}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "cache_misses_total", Help: "Data file reads this node served that were not in its disk cache."}),
		metaHits: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "metadata_cache_hits_total", Help: "Metadata file reads served from memory."}),
		metaMis: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "metadata_cache_misses_total", Help: "Metadata file reads that queried PostgreSQL."}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "cache_evictions_total", Help: "Data files evicted from the disk cache."}),
		buildSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub,
			Name: "build_seconds", Help: "Time to build a data file on a cache miss, by result.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)}, []string{"result"}),
		forwards: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "forwards_total", Help: "Data file reads forwarded to their owner, by result (failed: built here instead)."},
			[]string{"result"}),
		bytesServed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "served_bytes_total", Help: "Response body bytes written, by source."}, []string{"source"}),
		denied: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "denied_total", Help: "Requests refused by the signature or key check (auth principals), by S3 error code."},
			[]string{"code"}),
	}
	m.servedBy = map[string]prometheus.Counter{}
	for _, src := range []string{sourceMetadata, sourceCache, sourceBuild, sourceForwarded} {
		m.servedBy[src] = m.bytesServed.WithLabelValues(src)
	}
	if reg == nil {
		return m, nil
	}
	cs := []prometheus.Collector{m.hits, m.misses, m.metaHits, m.metaMis, m.evictions,
		m.buildSeconds, m.forwards, m.bytesServed, m.denied,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "cache_bytes", Help: "Bytes of data files in the disk cache."},
			func() float64 { _, b := s.cache.usage(); return float64(b) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "cache_files", Help: "Data files in the disk cache."},
			func() float64 { n, _ := s.cache.usage(); return float64(n) }),
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return nil, fmt.Errorf("objects: metrics already registered (wrap the Registerer with a node_id label): %w", err)
			}
			return nil, fmt.Errorf("objects: register metrics: %w", err)
		}
	}
	return m, nil
}

// Stats returns the node's S3 API counters and cache usage.
func (s *Server) Stats() Stats {
	files, bytes := s.cache.usage()
	c := &s.counters
	return Stats{
		Hits: c.hits.Load(), Misses: c.misses.Load(),
		Builds: c.builds.Load(), BuildErrors: c.buildErrors.Load(),
		Evictions: c.evictions.Load(),
		Files:     files, Bytes: bytes, Capacity: s.cfg.CacheSize,
		Forwards: c.forwards.Load(), ForwardFailures: c.forwardFailures.Load(),
		MetadataHits: c.metadataHits.Load(), MetadataMisses: c.metadataMisses.Load(),
		BytesServed: c.bytesServed.Load(),
	}
}

// served records the bytes of one response.
func (s *Server) served(source string, n int64) {
	if n <= 0 {
		return
	}
	s.counters.bytesServed.Add(uint64(n))
	s.metrics.servedBy[source].Add(float64(n))
}
