package compat

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/realkafka"
)

// clientVersions are the versions of the suite's Kafka client: librdkafka
// and confluent-kafka, its Python binding, from PyPI
// (compat/requirements.txt).
var clientVersions struct {
	once                  sync.Once
	librdkafka, confluent string
}

func loadClientVersions(t *testing.T) {
	t.Helper()
	clientVersions.once.Do(func() {
		out := runPython(t, time.Minute, "-c", "import confluent_kafka as c; print(c.libversion()[0], c.__version__)")
		if v := strings.Fields(string(out)); len(v) == 2 {
			clientVersions.librdkafka, clientVersions.confluent = v[0], v[1]
		}
	})
	if clientVersions.confluent == "" {
		t.Fatal("confluent_kafka's versions are unknown")
	}
}

// librdkafkaVersion names the producer and consumer of these tests.
func librdkafkaVersion(t *testing.T) string {
	loadClientVersions(t)
	return "librdkafka " + clientVersions.librdkafka + " (confluent-kafka " + clientVersions.confluent + ")"
}

// confluentKafkaVersion is confluent-kafka's version.
func confluentKafkaVersion(t *testing.T) string {
	loadClientVersions(t)
	return clientVersions.confluent
}

// kafkaComponent names the broker and the client in the matrix.
func kafkaComponent(k *realkafka.Cluster) string { return "Apache Kafka " + k.Version() }

// pyProducer is one run of compat/clients/produce.py in stream mode.
type pyProducer struct {
	topic          string
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
}

// startProducer starts producing count unique values to topic's
// partitions at rate records a second with librdkafka; flags are
// produce.py's producer settings (--idempotent, --transactional,
// --compression C, --config k=v).
func startProducer(t *testing.T, brokers []string, topic string, partitions, count, rate int, flags ...string) *pyProducer {
	t.Helper()
	args := append([]string{"clients/produce.py", "stream", "--bootstrap", strings.Join(brokers, ","), "--topic", topic,
		"--partitions", strconv.Itoa(partitions), "--count", strconv.Itoa(count), "--rate", strconv.Itoa(rate)}, flags...)
	p := &pyProducer{topic: topic, cmd: exec.Command(python(t), args...)}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_, _ = p.cmd.Process.Wait()
		}
	})
	return p
}

// wait waits for the producer to end and returns what Kafka acknowledged
// outside aborted transactions (the records a table must hold) and how
// many acknowledged records were in aborted ones (which it must not).
func (p *pyProducer) wait(t *testing.T) (clustertest.Produced, int) {
	t.Helper()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("produce.py %s: %v\n%s", p.topic, err, tail(p.stderr.String(), 40))
	}
	out := clustertest.Produced{Topic: p.topic, Unsure: map[string]bool{}}
	aborted := 0
	for _, r := range jsonLines[produced](t, p.stdout.Bytes()) {
		switch {
		case r.Failed:
			out.Failed++
			out.Unsure[r.V] = true
		case r.Aborted:
			aborted++
		default:
			out.Records = append(out.Records, clustertest.Record{Partition: r.P, Offset: r.O, Value: []byte(r.V)})
		}
	}
	t.Logf("%s: %d acknowledged, %d in aborted transactions, %d failed; %s", p.topic, len(out.Records), aborted, out.Failed,
		strings.TrimSpace(p.stderr.String()))
	return out, aborted
}

// TestRealKafkaExactlyOnce: records produced by librdkafka into a real
// broker with each codec, idempotent and transactional (every third
// transaction aborted), are read back from Mink exactly once while a
// node of two is killed mid-stream and a third joins: every committed
// record at its partition and offset with its bytes, no aborted one.
func TestRealKafkaExactlyOnce(t *testing.T) {
	timePart(t, "real Kafka: 4 librdkafka producers, a Mink node killed")
	k := realkafka.Start(t, realkafka.Options{})
	env := clustertest.New(t, clustertest.RealKafka(k))
	a := env.StartNode(clustertest.NodeOptions{})
	env.StartNode(clustertest.NodeOptions{})
	type run struct {
		name  string
		flags []string
	}
	runs := []run{
		{"idempotent, gzip", []string{"--idempotent", "--compression", "gzip"}},
		{"idempotent, snappy", []string{"--idempotent", "--compression", "snappy"}},
		{"transactional (1 in 3 aborted), lz4", []string{"--transactional", "--compression", "lz4"}},
		{"transactional (1 in 3 aborted), zstd", []string{"--transactional", "--compression", "zstd"}},
	}
	const partitions, count, rate = 4, 3000, 500
	start := time.Now()
	prods := make([]*pyProducer, len(runs))
	for i, r := range runs {
		topic := fmt.Sprintf("exact-%d", i)
		env.CreateRawTable(a.URL(), "compat", strings.ReplaceAll(topic, "-", "_"), topic, partitions)
		prods[i] = startProducer(t, k.Addrs(), topic, partitions, count, rate, r.flags...)
	}
	time.Sleep(2 * time.Second)
	a.Kill()
	c := env.StartNode(clustertest.NodeOptions{})
	client := librdkafkaVersion(t)
	for i, r := range runs {
		produced, aborted := prods[i].wait(t)
		check(t, kafkaComponent(k), client, "exactly once across a node crash: "+r.name, func(t *testing.T) {
			if strings.Contains(r.name, "transactional") && aborted == 0 {
				t.Errorf("no record was in an aborted transaction")
			}
			clustertest.WaitExact(t, c.URL(), "compat."+strings.ReplaceAll(prods[i].topic, "-", "_"), produced)
		})
	}
	t.Logf("exactly-once runs: %s", time.Since(start).Round(time.Millisecond))
}

// logRecords reads topic from the first offset Kafka still holds to its
// end and returns every record, as a table over it must hold them. The
// topic must be written without transactions and not be written to
// meanwhile: its last offset is then a record's (the cleaner never
// removes the active segment's last record).
func logRecords(t *testing.T, k *realkafka.Cluster, topic string) clustertest.Produced {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adm := kadm.NewClient(k.Client(t))
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	ends, err2 := adm.ListEndOffsets(ctx, topic)
	if err2 == nil {
		err2 = ends.Error()
	}
	if err != nil || err2 != nil {
		t.Fatalf("offsets of %s: %v %v", topic, err, err2)
	}
	left := map[int32]int64{} // partition → end, for partitions with records
	ends.Each(func(o kadm.ListedOffset) {
		if s, ok := starts.Lookup(topic, o.Partition); ok && s.Offset < o.Offset {
			left[o.Partition] = o.Offset
		}
	})
	cl := k.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	out := clustertest.Produced{Topic: topic}
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading %s: partitions not read to their ends: %v", topic, left)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("reading %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			out.Records = append(out.Records, clustertest.Record{Partition: r.Partition, Offset: r.Offset, Value: r.Value})
			if end, ok := left[r.Partition]; ok && r.Offset+1 >= end {
				delete(left, r.Partition)
			}
		})
	}
	return out
}

// TestRealKafkaTopicShapes: tables over topics a real broker shapes in
// ways kfake does not: a compacted topic after the cleaner ran (offsets
// with gaps), both for a table created after it ran and for one indexed
// before (read again by a node with an empty cache, which rebuilds and
// re-indexes what changed, design §4.5); a topic whose retention deleted
// its first segments (log start offset above 0); and a topic of more
// than 64 partitions.
func TestRealKafkaTopicShapes(t *testing.T) {
	timePart(t, "real Kafka: 80 partitions, retention, compaction")
	k := realkafka.Start(t, realkafka.Options{ServerProps: map[string]string{
		"log.cleaner.backoff.ms":            "200",
		"log.retention.check.interval.ms":   "500",
		"log.cleaner.min.compaction.lag.ms": "0",
	}})
	env := clustertest.New(t, clustertest.RealKafka(k))
	a := env.StartNode(clustertest.NodeOptions{})
	client := librdkafkaVersion(t)
	component := kafkaComponent(k)

	check(t, component, client, "more than 64 partitions (80)", func(t *testing.T) {
		env.CreateRawTable(a.URL(), "compat", "wide", "wide", 80)
		produced, _ := startProducer(t, k.Addrs(), "wide", 80, 2400, 2000, "--idempotent").wait(t)
		clustertest.WaitExact(t, a.URL(), "compat.wide", produced)
	})

	check(t, component, client, "retention deleted the first segments (log start offset > 0)", func(t *testing.T) {
		k.CreateTopic("retained", 2, 1, map[string]string{"segment.bytes": "1048576", "retention.bytes": "1048576"})
		// 3 MiB a partition: Kafka keeps the last 1 MiB and the active
		// segment, and deletes the rest once.
		startProducer(t, k.Addrs(), "retained", 2, 6000, 20000, "--idempotent", "--pad", "1000").wait(t)
		waitLogStart(t, k, "retained")
		env.CreateTable(a.URL(), map[string]any{"namespace": "compat", "name": "retained", "topic": "retained", "value_format": "raw"})
		clustertest.WaitExact(t, a.URL(), "compat.retained", logRecords(t, k, "retained"))
	})

	check(t, component, client, "compacted topic: offsets with gaps after the cleaner ran", func(t *testing.T) {
		k.CreateTopic("compacted", 2, 1, map[string]string{"cleanup.policy": "compact", "segment.ms": "500",
			"min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "100"})
		env.CreateTable(a.URL(), map[string]any{"namespace": "compat", "name": "compacted_before", "topic": "compacted", "value_format": "raw"})
		n := produceKeyed(t, k, "compacted", 40, 30)
		// The cleaner runs while the table indexes: a file built before
		// it ran and read again after may differ, which design §4.5 makes
		// a 500 and a re-index; so the table is read only at the end.
		clustertest.WaitCommitted(t, a.URL(), "compat.compacted_before", logRecords(t, k, "compacted").Ends(), clustertest.CommitTimeout)
		after := waitCompacted(t, k, "compacted", n)
		env.CreateTable(a.URL(), map[string]any{"namespace": "compat", "name": "compacted_after", "topic": "compacted", "value_format": "raw"})
		clustertest.WaitExact(t, a.URL(), "compat.compacted_after", after)
		// The table indexed before the cleaner ran, read by a node that
		// has cached nothing: its rebuilds differ from the recorded
		// checksums, and the files are indexed again.
		a.Kill()
		b := env.StartNode(clustertest.NodeOptions{})
		waitScanEquals(t, b.URL(), "compat.compacted_before", after, 2*time.Minute)
	})
}

// produceKeyed produces rounds values of each of keys keys to topic (by
// key, idempotent) with franz-go, pausing between rounds so that the
// broker rolls segments, and one last record after the topic's
// segment.ms to roll the last one. It returns how many it produced.
func produceKeyed(t *testing.T, k *realkafka.Cluster, topic string, keys, rounds int) int {
	t.Helper()
	cl := k.Client(t, kgo.DefaultProduceTopic(topic))
	n := 0
	for r := 0; r < rounds; r++ {
		var recs []*kgo.Record
		for i := 0; i < keys; i++ {
			recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "k%02d", i), Value: fmt.Appendf(nil, "k%02d-round-%d", i, r)})
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		n += len(recs)
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	for i := 0; i < keys; i++ {
		rec := &kgo.Record{Key: fmt.Appendf(nil, "k%02d", i), Value: fmt.Appendf(nil, "k%02d-last", i)}
		if err := cl.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// waitCompacted waits until the cleaner removed records of topic (fewer
// than produced are left) and then left it alone for 3 s, and returns
// what is left.
func waitCompacted(t *testing.T, k *realkafka.Cluster, topic string, produced int) clustertest.Produced {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var last clustertest.Produced
	for {
		left := logRecords(t, k, topic)
		if len(left.Records) < produced && len(left.Records) == len(last.Records) {
			t.Logf("%s: the cleaner left %d of %d records", topic, len(left.Records), produced)
			return left
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the cleaner left %d of %d records and did not settle in 90 s", topic, len(left.Records), produced)
		}
		last = left
		time.Sleep(3 * time.Second)
	}
}

// waitLogStart waits until every partition of topic has a log start
// offset above 0.
func waitLogStart(t *testing.T, k *realkafka.Cluster, topic string) {
	t.Helper()
	adm := kadm.NewClient(k.Client(t))
	deadline := time.Now().Add(60 * time.Second)
	for {
		starts, err := adm.ListStartOffsets(context.Background(), topic)
		ok := err == nil && starts.Error() == nil
		var desc []string
		starts.Each(func(o kadm.ListedOffset) {
			desc = append(desc, fmt.Sprintf("%d@%d", o.Partition, o.Offset))
			ok = ok && o.Offset > 0
		})
		if ok {
			t.Logf("%s: log start offsets %s", topic, strings.Join(desc, " "))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: log start offsets %v after 60 s (%v)", topic, desc, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitScanEquals reads table through the node until it holds exactly
// want's records (a read may fail meanwhile: a rebuild that differs from
// its recorded checksum answers 500 until the file is indexed again).
func waitScanEquals(t *testing.T, url, tableName string, want clustertest.Produced, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		at, err := clustertest.TryScan(url, tableName)
		if err == nil {
			diff, _ := clustertest.Mismatch(t, at, want)
			at.Release()
			if diff == "" {
				return
			}
			err = fmt.Errorf("not exact: %s", diff)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", tableName, err)
		}
		time.Sleep(time.Second)
	}
}

// TestRealKafkaLeaderKilled: on three brokers (replication factor 3,
// min.insync.replicas 2), the leader of a partition is killed while
// librdkafka produces and Mink indexes, and started again later:
// indexing and loads go on by themselves, and the table holds every
// acknowledged record exactly once.
func TestRealKafkaLeaderKilled(t *testing.T) {
	timePart(t, "real Kafka, 3 brokers: a leader killed")
	k := realkafka.Start(t, realkafka.Options{Brokers: 3})
	env := clustertest.New(t, clustertest.RealKafka(k))
	a := env.StartNode(clustertest.NodeOptions{})
	env.StartNode(clustertest.NodeOptions{})
	check(t, kafkaComponent(k)+" (3 brokers)", librdkafkaVersion(t), "partition leader killed mid-indexing", func(t *testing.T) {
		k.CreateTopic("failover", 6, 3, map[string]string{"min.insync.replicas": "2"})
		env.CreateTable(a.URL(), map[string]any{"namespace": "compat", "name": "failover", "topic": "failover", "value_format": "raw"})
		prod := startProducer(t, k.Addrs(), "failover", 6, 6000, 500, "--idempotent", "--compression", "lz4")
		time.Sleep(3 * time.Second)
		leader := k.Leader("failover", 0)
		k.Kill(leader)
		t.Logf("killed broker %d, the leader of failover/0", leader)
		time.Sleep(4 * time.Second)
		// A load while the broker is down: the zero-lag path reads the
		// new leaders.
		if _, err := clustertest.TryScan(a.URL(), "compat.failover"); err != nil {
			t.Logf("a scan while broker %d was down: %v", leader, err)
		}
		k.Restart(leader)
		produced, _ := prod.wait(t)
		clustertest.WaitExact(t, a.URL(), "compat.failover", produced)
	})
}

// TestRealKafkaTLSAndSCRAM: Mink over a real broker's SASL_SSL listener
// (TLS, SCRAM-SHA-512), fed by librdkafka over the same listener.
func TestRealKafkaTLSAndSCRAM(t *testing.T) {
	timePart(t, "real Kafka: TLS and SCRAM")
	k := realkafka.Start(t, realkafka.Options{TLS: true, SCRAM: map[string]string{"mink": "mink-secret-1"}})
	env := clustertest.New(t, clustertest.RealKafka(k))
	a := env.StartNode(clustertest.NodeOptions{})
	check(t, kafkaComponent(k), librdkafkaVersion(t), "TLS and SASL/SCRAM-SHA-512", func(t *testing.T) {
		env.CreateRawTable(a.URL(), "compat", "secured", "secured", 3)
		produced, _ := startProducer(t, k.Addrs(), "secured", 3, 1500, 1000, "--idempotent",
			"--config", "security.protocol=SASL_SSL", "--config", "sasl.mechanism=SCRAM-SHA-512",
			"--config", "sasl.username=mink", "--config", "sasl.password=mink-secret-1",
			"--config", "ssl.ca.location="+k.CAFile()).wait(t)
		clustertest.WaitExact(t, a.URL(), "compat.secured", produced)
	})
}
