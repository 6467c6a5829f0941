package ui

import (
	"html/template"
	"net/url"
	"strings"
	"time"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/internal/readable"
)

// funcs are the templates' functions: numbers and times as `mink status`
// shows them (internal/readable), and the sums of a table's partitions.
var funcs = template.FuncMap{
	"count": func(n any) string {
		switch v := n.(type) {
		case int:
			return readable.Count(int64(v))
		case int32:
			return readable.Count(int64(v))
		case *int64: // a count that may be unknown (nil)
			if v == nil {
				return "–"
			}
			return readable.Count(*v)
		default:
			return readable.Count(v.(int64))
		}
	},
	"rate":   readable.Rate,
	"bytes":  readable.Bytes,
	"until":  func(at *time.Time, now time.Time) string { return readable.Until(at, now) },
	"untilT": func(at time.Time, now time.Time) string { return readable.Until(&at, now) },
	"ago":    readable.Ago,
	"clock":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"iso":    func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	// isoMs is a snapshot's time as mink scan --as-of takes it.
	"isoMs": func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") },
	// shellQuote quotes s as one POSIX shell word, for the commands the
	// console shows to copy: 'it'\''s' for it's. The template still
	// escapes the result for HTML.
	"shellQuote": func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" },
	// tableURL is the path of a table's page, its name escaped as one
	// path segment.
	"tableURL": func(name string) string { return "/ui/tables/" + url.PathEscape(name) },
	// offset shows n, one of Kafka's offsets or what is computed from
	// them, or "–" when Kafka could not be asked (kerr set: n is 0, not
	// known).
	"offset": func(kerr string, n int64) string {
		if kerr != "" {
			return "–"
		}
		return readable.Count(n)
	},
	"sums": sumsOf,
	"clusterSums": func(ts []*admin.TableStatus) sums {
		var s sums
		for _, t := range ts {
			ps := sumsOf(t.Partitions)
			s.Partitions += ps.Partitions
			s.Held += ps.Held
			s.Rate += ps.Rate
			if t.KafkaError != "" {
				s.Unknown++
				continue
			}
			s.Lag += ps.Lag
		}
		return s
	},
	"maxLeases": func(nodes []admin.NodeSummary) int {
		m := 1
		for _, n := range nodes {
			m = max(m, n.PartitionLeases)
		}
		return m
	},
	"lagClass": func(lag int64) string {
		switch {
		case lag == 0:
			return "num"
		case lag < 10000:
			return "num lag"
		}
		return "num lag high"
	},
}

// sums are the totals of a table's partitions.
type sums struct {
	Partitions, Held int
	Lag              int64
	Rate             float64
	HighWatermark    int64
	Indexed          int64
	// Unknown is how many tables' lags are not in Lag: Kafka could not be
	// asked for their offsets.
	Unknown int
}

func sumsOf(parts []admin.PartitionStatus) sums {
	s := sums{Partitions: len(parts)}
	for _, p := range parts {
		if p.Holder != nil {
			s.Held++
		}
		s.Lag += p.Lag
		s.Rate += p.RecordsPerSecond
		s.HighWatermark += p.HighWatermark
		s.Indexed += p.IndexedOffset
	}
	return s
}
