package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"time"
)

// idxBuckets attribute CPU samples to the parts of a pipeline. A sample
// goes to the first bucket, in this order, one of whose patterns matches
// any frame of its stack (so allocation and GC assists count towards the
// part that allocates).
var idxBuckets = []struct {
	name string
	re   *regexp.Regexp
}{
	{"GC (background)", regexp.MustCompile(`^runtime\.gcBgMarkWorker`)},
	{"Kafka broker (kfake)", regexp.MustCompile(`^github\.com/twmb/franz-go/pkg/kfake\.`)},
	{"Postgres client (pgx)", regexp.MustCompile(`^github\.com/jackc/`)},
	{"SHA-256", regexp.MustCompile(`^crypto/`)},
	// Before the codec: Avro and Protobuf decoding runs under the
	// codec's registry decoder, and Spec looks up writer schemas with the
	// codec's helpers.
	{"writer schema lookup (schemas.Store.Spec)", regexp.MustCompile(`^github\.com/minkhq/mink/schemas\.\(\*Store\)\.Spec`)},
	{"Avro decode", regexp.MustCompile(`^github\.com/minkhq/mink/codec/avro\.|^github\.com/hamba/avro`)},
	{"Protobuf decode", regexp.MustCompile(`^github\.com/minkhq/mink/codec/protobuf\.|^google\.golang\.org/protobuf/`)},
	{"codec (JSON decode; _kafka, wire header)", regexp.MustCompile(`^github\.com/minkhq/mink/codec\.|^encoding/json\.|^github\.com/goccy/go-json|^github\.com/apache/arrow-go/v18/arrow/array\.\(\*\w+\)\.Unmarshal`)},
	{"Mink statistics", regexp.MustCompile(`^github\.com/minkhq/mink/datafile\.(fileStats|structBounds)`)},
	{"Parquet encode", regexp.MustCompile(`^github\.com/apache/arrow-go/v18/parquet`)},
	{"iceberg-go (stats, manifests, commit)", regexp.MustCompile(`^github\.com/apache/iceberg-go`)},
	{"Arrow builders", regexp.MustCompile(`^github\.com/apache/arrow-go/v18/arrow`)},
	{"Kafka client (franz-go)", regexp.MustCompile(`^github\.com/twmb/franz-go/pkg/(kgo|kmsg)`)},
	{"Mink other", regexp.MustCompile(`^github\.com/minkhq/mink/`)},
}

// idxProfileSummary summarizes the CPU profile at path with `go tool pprof
// -traces`: the share of sampled CPU per part of the pipeline (idxBuckets)
// and the functions with the most samples of their own.
func idxProfileSummary(ctx context.Context, path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("no profile")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, goBin, "tool", "pprof", "-traces", path).Output()
	if err != nil {
		return "", fmt.Errorf("go tool pprof: %w", err)
	}
	byBucket := map[string]time.Duration{}
	byLeaf := map[string]time.Duration{}
	var total time.Duration
	var value time.Duration
	var stack []string
	flush := func() {
		if value == 0 || len(stack) == 0 {
			value, stack = 0, nil
			return
		}
		total += value
		byLeaf[stack[0]] += value
		b := "other"
	find:
		for _, bk := range idxBuckets {
			for _, fr := range stack {
				if bk.re.MatchString(fr) {
					b = bk.name
					break find
				}
			}
		}
		byBucket[b] += value
		value, stack = 0, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	started := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "-----------+") {
			flush()
			started = true
			continue
		}
		if !started {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(stack) == 0 && value == 0 {
			// The first line of a trace: its value, then the leaf frame.
			d, err := time.ParseDuration(fields[0])
			if err != nil || len(fields) < 2 {
				continue // a label line
			}
			value = d
			stack = append(stack, fields[1])
			continue
		}
		if strings.HasSuffix(fields[0], ":") {
			continue // a label line
		}
		stack = append(stack, fields[0])
	}
	flush()
	if err := sc.Err(); err != nil {
		return "", err
	}
	if total == 0 {
		return "", fmt.Errorf("empty profile")
	}
	pct := func(d time.Duration) float64 { return 100 * float64(d) / float64(total) }
	var parts []string
	for _, kv := range idxTop(byBucket, len(byBucket)) {
		if p := pct(kv.d); p >= 1 {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", kv.k, p))
		}
	}
	var leaves []string
	for _, kv := range idxTop(byLeaf, 6) {
		leaves = append(leaves, fmt.Sprintf("%s %.0f%%", idxShortFunc(kv.k), pct(kv.d)))
	}
	return fmt.Sprintf("%.1f CPU-s sampled: %s; top functions by own samples: %s.",
		total.Seconds(), strings.Join(parts, ", "), strings.Join(leaves, ", ")), nil
}

type idxKV struct {
	k string
	d time.Duration
}

// idxTop returns the n largest entries of m, largest first.
func idxTop(m map[string]time.Duration, n int) []idxKV {
	kvs := make([]idxKV, 0, len(m))
	for k, d := range m {
		kvs = append(kvs, idxKV{k, d})
	}
	sort.Slice(kvs, func(i, j int) bool {
		if kvs[i].d != kvs[j].d {
			return kvs[i].d > kvs[j].d
		}
		return kvs[i].k < kvs[j].k
	})
	return kvs[:min(n, len(kvs))]
}

// idxShortFunc drops the module path of a function name:
// github.com/apache/arrow-go/v18/parquet/file.(*x).y → file.(*x).y.
func idxShortFunc(f string) string {
	if i := strings.LastIndex(f, "/"); i >= 0 {
		return f[i+1:]
	}
	return f
}
