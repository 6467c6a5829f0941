package cluster

import (
	"errors"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons a holding is lost (mink_lease_losses_total{reason}): the node
// stopped holding a lease without handing it back.
const (
	// LossRenewalMissing: the lease was missing from the renewal result
	// (docs/design.md §3.2), e.g. it expired and another node took it.
	LossRenewalMissing = "renewal_missing"
	// LossNotInDatabase: the leases read in a round no longer show the
	// lease as this node's at this epoch.
	LossNotInDatabase = "not_in_database"
	// LossJobFailed: the lease's job returned an error (for example a
	// fenced write); the node dropped the lease and handed the row back.
	LossJobFailed = "job_failed"
	// LossAbandoned: the node stopped without releasing the lease (the
	// release at stop failed); it is left to expire.
	LossAbandoned = "abandoned"
	// LossDeleted: the lease's row is gone because its table was deleted
	// (the rows cascade). Expected, not a fault: logged at Info, and
	// alerts on losses should leave this reason out.
	LossDeleted = "deleted"
)

var (
	leaseKinds  = []string{KindPartition, KindWriter}
	lossReasons = []string{LossRenewalMissing, LossNotInDatabase, LossJobFailed, LossAbandoned, LossDeleted}
)

// metrics are the cluster loop's counters (docs/design.md §5 "metrics": lease
// changes). With a nil Registerer they are kept but not exported.
type metrics struct {
	takes    *prometheus.CounterVec // kind
	releases *prometheus.CounterVec // kind
	losses   *prometheus.CounterVec // kind, reason
	held     *prometheus.GaugeVec   // kind
	lapses   *prometheus.CounterVec // kind
	rounds   *prometheus.CounterVec // result
	reads    *prometheus.CounterVec // read (full, changes)
	readRows *prometheus.CounterVec // what (lease, deleted, expired)
}

func newMetrics(reg prometheus.Registerer, log *slog.Logger) *metrics {
	m := &metrics{
		takes: counterVec("mink_lease_takes_total",
			"Leases this node took (docs/design.md §3.2: each take increments the lease epoch), by kind (partition, writer).",
			"kind"),
		releases: counterVec("mink_lease_releases_total",
			"Leases this node handed back (docs/design.md §3.2/§3.3: rebalancing and clean stop), by kind.",
			"kind"),
		losses: counterVec("mink_lease_losses_total",
			"Leases this node stopped holding without handing them back (docs/design.md §3.2), by kind and reason: "+
				"renewal_missing (absent from the renewal result), not_in_database (the round's read shows another holder or epoch), "+
				"job_failed (the job returned an error, e.g. a fenced write), abandoned (not released at stop).",
			"kind", "reason"),
		held: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mink_leases_held",
			Help: "Leases this node holds now (docs/design.md §3.2), by kind.",
		}, []string{"kind"}),
		lapses: counterVec("mink_lease_trust_lapses_total",
			"Jobs stopped because the trust window ended without a successful renewal (docs/design.md §3.2); "+
				"the lease stays held and its job restarts after the next successful round. By kind.",
			"kind"),
		rounds: counterVec("mink_cluster_rounds_total",
			"Sharing rounds (docs/design.md §3.3: register, renew, read, release, take), by result (ok, error).",
			"result"),
		reads: counterVec("mink_cluster_lease_reads_total",
			"Reads of the lease table by the sharing rounds (docs/design.md §3.3), by read: full (the first, or after "+
				"tombstones it had not seen were pruned) or changes (only what changed since the previous read).",
			"read"),
		readRows: counterVec("mink_cluster_lease_read_rows_total",
			"Rows the rounds' lease reads returned (docs/design.md §3.3), by what: lease (a row inserted, taken or "+
				"released since the previous read; every row in a full read), deleted (a tombstone), expired (a held lease past its expiry).",
			"what"),
	}
	// Every label value up front, so that the series exist at 0.
	for _, k := range leaseKinds {
		m.takes.WithLabelValues(k)
		m.releases.WithLabelValues(k)
		m.held.WithLabelValues(k)
		m.lapses.WithLabelValues(k)
		for _, r := range lossReasons {
			m.losses.WithLabelValues(k, r)
		}
	}
	m.rounds.WithLabelValues("ok")
	m.rounds.WithLabelValues("error")
	for _, r := range []string{"full", "changes"} {
		m.reads.WithLabelValues(r)
	}
	for _, w := range []string{"lease", "deleted", "expired"} {
		m.readRows.WithLabelValues(w)
	}
	if reg != nil {
		m.takes = register(reg, m.takes, log)
		m.releases = register(reg, m.releases, log)
		m.losses = register(reg, m.losses, log)
		m.held = register(reg, m.held, log)
		m.lapses = register(reg, m.lapses, log)
		m.rounds = register(reg, m.rounds, log)
		m.reads = register(reg, m.reads, log)
		m.readRows = register(reg, m.readRows, log)
	}
	return m
}

func (m *metrics) round(err error) {
	if err != nil {
		m.rounds.WithLabelValues("error").Inc()
		return
	}
	m.rounds.WithLabelValues("ok").Inc()
}

func (m *metrics) read(r viewRead) {
	if r.full {
		m.reads.WithLabelValues("full").Inc()
	} else {
		m.reads.WithLabelValues("changes").Inc()
	}
	m.readRows.WithLabelValues("lease").Add(float64(r.changed))
	m.readRows.WithLabelValues("deleted").Add(float64(r.deleted))
	m.readRows.WithLabelValues("expired").Add(float64(r.expired))
}

func (m *metrics) took(kind string) {
	m.takes.WithLabelValues(kind).Inc()
	m.held.WithLabelValues(kind).Inc()
}

func (m *metrics) released(kind string) {
	m.releases.WithLabelValues(kind).Inc()
	m.held.WithLabelValues(kind).Dec()
}

func (m *metrics) lost(kind, reason string) {
	m.losses.WithLabelValues(kind, reason).Inc()
	m.held.WithLabelValues(kind).Dec()
}

// counterVec is a counter named name, with help and label names labels.
func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// register registers c with reg and returns it, or the collector already
// registered in its place (several components, or several Clusters in one
// process, share a registry and then share the series).
func register[C prometheus.Collector](reg prometheus.Registerer, c C, log *slog.Logger) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
		return c
	}
	if log != nil {
		log.Warn("cluster: metrics", "err", err)
	}
	return c
}

// Jobs counted by FencedWrites.
const (
	JobIndexer = "indexer"
	JobWriter  = "writer"
)

// FencedWrites returns the counter of writes Postgres rejected as fenced
// (pgstore.ErrFenced: the lease epoch was no longer the current one, design
// §3.2) for job (JobIndexer or JobWriter), registered with reg. The indexer
// and the writer share the one metric, mink_fenced_writes_total{job}. With
// a nil reg the counter counts but is not exported.
func FencedWrites(reg prometheus.Registerer, job string) prometheus.Counter {
	v := counterVec("mink_fenced_writes_total",
		"Writes Postgres rejected because the lease epoch they carried was no longer current "+
			"(docs/design.md §3.2 fencing); the job stops at once. By job (indexer, writer).",
		"job")
	if reg != nil {
		v = register(reg, v, nil)
	}
	return v.WithLabelValues(job)
}
