package realkafka

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/minkhq/mink/internal/testca"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/internal/testkit/proc"
)

// EnvJars names a variable holding a folder of the broker's jars (what
// `scripts/ensure-maven kafka` prints); when it is unset the folder is
// resolved with that script.
const EnvJars = "MINK_KAFKA_JARS"

// Timeouts of the waits of Start, Restart and CreateTopic.
const (
	StartTimeout = 120 * time.Second
	TopicTimeout = 60 * time.Second
)

// Options says what cluster Start runs. The zero value is one broker
// with a PLAINTEXT listener.
type Options struct {
	// Brokers is the number of nodes, each a broker and a KRaft voter
	// (default 1). Internal topics and topics created with a
	// replication factor of -1 get min(Brokers, 3) replicas.
	Brokers int
	// TLS makes the clients' listener take TLS only, with a certificate
	// for 127.0.0.1 from a throwaway CA (CAFile).
	TLS bool
	// SCRAM maps users to passwords: the clients' listener then takes
	// SASL with SCRAM-SHA-256 and SCRAM-SHA-512 only (SASL_SSL with TLS,
	// SASL_PLAINTEXT without), and each user can authenticate with
	// either. Passwords must not hold ',', ']' or '"' (the storage
	// tool's --add-scram syntax).
	SCRAM map[string]string
	// Mechanism is what Client and MinkArgs authenticate with:
	// "SCRAM-SHA-512" (default) or "SCRAM-SHA-256".
	Mechanism string
	// ServerProps are more broker properties (server.properties keys,
	// for example log.retention.check.interval.ms); they override the
	// package's.
	ServerProps map[string]string
}

// Cluster is a running Kafka cluster of Options.Brokers nodes.
type Cluster struct {
	t         testing.TB
	opts      Options
	java      string
	jars      string
	version   string
	clusterID string
	caFile    string
	tls       *tls.Config
	user      string
	password  string
	nodes     []*node

	adminOnce sync.Once
	admin     *kadm.Client
	adminCl   *kgo.Client
}

type node struct {
	id                   int32 // node.id: index + 1
	dir, props, logPath  string
	port, internal, ctrl int
	mu                   sync.Mutex
	p                    *proc.Process
	restarts             int
}

// Start formats and starts a cluster as opts say and waits until every
// broker is registered and answers metadata. It fails t when Java or the
// jars are missing, a node does not start, or the cluster is not up
// within StartTimeout.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Brokers <= 0 {
		opts.Brokers = 1
	}
	if opts.Mechanism == "" {
		opts.Mechanism = "SCRAM-SHA-512"
	}
	if opts.Mechanism != "SCRAM-SHA-512" && opts.Mechanism != "SCRAM-SHA-256" {
		t.Fatalf("realkafka: mechanism %q: want SCRAM-SHA-512 or SCRAM-SHA-256", opts.Mechanism)
	}
	jars, err := Jars()
	if err != nil {
		t.Fatalf("realkafka: %v", err)
	}
	version, err := versionOf(jars)
	if err != nil {
		t.Fatalf("realkafka: %v", err)
	}
	c := &Cluster{t: t, opts: opts, java: javaBin(), jars: jars, version: version, clusterID: newClusterID()}
	dir := t.TempDir()

	var keystore string
	if opts.TLS {
		certs := testca.NewSet(t)
		c.caFile, c.tls = certs.CAFile, certs.ClientTLS()
		keystore = filepath.Join(dir, "keystore.pem")
		if err := writeKeystore(keystore, certs.ServerCert, certs.ServerKey); err != nil {
			t.Fatalf("realkafka: keystore: %v", err)
		}
	}
	if len(opts.SCRAM) > 0 {
		users := make([]string, 0, len(opts.SCRAM))
		for u, p := range opts.SCRAM {
			if strings.ContainsAny(u, ",]\"=") || strings.ContainsAny(p, ",]\"") {
				t.Fatalf("realkafka: SCRAM user %q: a name holding ',', ']', '\"' or '=', or a password holding ',', ']' or '\"'", u)
			}
			users = append(users, u)
		}
		sort.Strings(users)
		c.user, c.password = users[0], opts.SCRAM[users[0]]
	}

	used := map[int]bool{}
	port := func() int {
		for {
			p, err := proc.FreePort()
			if err != nil {
				t.Fatalf("realkafka: free port: %v", err)
			}
			if !used[p] {
				used[p] = true
				return p
			}
		}
	}
	for i := range opts.Brokers {
		n := &node{id: int32(i + 1), dir: filepath.Join(dir, fmt.Sprintf("node-%d", i+1)), port: port(), internal: port(), ctrl: port()}
		if err := os.MkdirAll(n.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		n.props = filepath.Join(n.dir, "server.properties")
		n.logPath = filepath.Join(n.dir, "server.log")
		c.nodes = append(c.nodes, n)
	}
	for _, n := range c.nodes {
		if err := os.WriteFile(n.props, []byte(c.properties(n, keystore)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(n.dir, "log4j2.properties"), []byte(log4jConfig(n.logPath)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(c.cleanup)

	// Format every node's storage, in parallel (a JVM each, ~3 s).
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.format(n)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("realkafka: format: %v", err)
	}
	for _, n := range c.nodes {
		c.startNode(n)
	}
	c.waitUp(StartTimeout, nil)
	return c
}

// Jars returns the folder of the broker's jars: MINK_KAFKA_JARS, or what
// `scripts/ensure-maven kafka` prints (resolving them from Maven Central
// on first use, ~20 s; later runs find them in the user's cache). The
// answer is kept for the test binary.
func Jars() (string, error) {
	jarsOnce.Do(func() {
		if d := os.Getenv(EnvJars); d != "" {
			jarsDir = d
			return
		}
		jarsDir, jarsErr = testkit.Ensure("ensure-maven", "kafka")
	})
	return jarsDir, jarsErr
}

var (
	jarsOnce sync.Once
	jarsDir  string
	jarsErr  error
)

func versionOf(jars string) (string, error) {
	m, err := filepath.Glob(filepath.Join(jars, "kafka_2.13-*.jar"))
	if err != nil || len(m) == 0 {
		return "", fmt.Errorf("no kafka_2.13-*.jar in %s", jars)
	}
	return strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m[0]), "kafka_2.13-"), ".jar"), nil
}

func javaBin() string {
	if h := os.Getenv("JAVA_HOME"); h != "" {
		return filepath.Join(h, "bin", "java")
	}
	return "java"
}

// newClusterID is a random Kafka Uuid as the storage tool takes it: 16
// bytes, base64url without padding.
func newClusterID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// writeKeystore writes the broker's PEM keystore: the key as PKCS#8 (the
// only PEM key form Kafka reads) followed by the certificate.
func writeKeystore(path, certFile, keyFile string) error {
	kb, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	block, _ := pem.Decode(kb)
	if block == nil {
		return fmt.Errorf("%s: no PEM block", keyFile)
	}
	key, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil {
		return err
	}
	p8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	cb, err := os.ReadFile(certFile)
	if err != nil {
		return err
	}
	out := append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8}), cb...)
	return os.WriteFile(path, out, 0o600)
}

func (c *Cluster) protocol() string {
	switch {
	case c.opts.TLS && len(c.opts.SCRAM) > 0:
		return "SASL_SSL"
	case c.opts.TLS:
		return "SSL"
	case len(c.opts.SCRAM) > 0:
		return "SASL_PLAINTEXT"
	}
	return "PLAINTEXT"
}

func (c *Cluster) properties(n *node, keystore string) string {
	rf := min(len(c.nodes), 3)
	var voters []string
	for _, v := range c.nodes {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", v.id, v.ctrl))
	}
	props := map[string]string{
		"process.roles":                                    "broker,controller",
		"node.id":                                          fmt.Sprint(n.id),
		"controller.quorum.voters":                         strings.Join(voters, ","),
		"listeners":                                        fmt.Sprintf("EXTERNAL://127.0.0.1:%d,INTERNAL://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", n.port, n.internal, n.ctrl),
		"advertised.listeners":                             fmt.Sprintf("EXTERNAL://127.0.0.1:%d,INTERNAL://127.0.0.1:%d", n.port, n.internal),
		"controller.listener.names":                        "CONTROLLER",
		"inter.broker.listener.name":                       "INTERNAL",
		"listener.security.protocol.map":                   "EXTERNAL:" + c.protocol() + ",INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"log.dirs":                                         filepath.Join(n.dir, "data"),
		"num.partitions":                                   "1",
		"default.replication.factor":                       fmt.Sprint(rf),
		"auto.create.topics.enable":                        "false",
		"offsets.topic.replication.factor":                 fmt.Sprint(rf),
		"offsets.topic.num.partitions":                     "5",
		"transaction.state.log.replication.factor":         fmt.Sprint(rf),
		"transaction.state.log.min.isr":                    fmt.Sprint(min(rf, 2)),
		"transaction.state.log.num.partitions":             "5",
		"share.coordinator.state.topic.replication.factor": fmt.Sprint(rf),
		"share.coordinator.state.topic.min.isr":            fmt.Sprint(min(rf, 2)),
		"group.initial.rebalance.delay.ms":                 "0",
		"num.network.threads":                              "2",
		"num.io.threads":                                   "4",
		"background.threads":                               "4",
		"log.cleaner.threads":                              "1",
		"log.cleaner.dedupe.buffer.size":                   fmt.Sprint(16 << 20),
		// Retention and the other log tasks start 30 s after start by
		// default (a testing-only setting).
		"log.initial.task.delay.ms": "500",
		// A broker that lost its controller connection must be fenced
		// and its partitions moved quickly in the failure tests.
		"broker.session.timeout.ms":             "6000",
		"broker.heartbeat.interval.ms":          "1000",
		"controller.quorum.election.timeout.ms": "1000",
		"controller.quorum.fetch.timeout.ms":    "2000",
	}
	if c.opts.TLS {
		props["ssl.keystore.type"] = "PEM"
		props["ssl.keystore.location"] = keystore
	}
	if len(c.opts.SCRAM) > 0 {
		props["sasl.enabled.mechanisms"] = "SCRAM-SHA-256,SCRAM-SHA-512"
		for _, m := range []string{"scram-sha-256", "scram-sha-512"} {
			props["listener.name.external."+m+".sasl.jaas.config"] = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
		}
	}
	for k, v := range c.opts.ServerProps {
		props[k] = v
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, escapeProp(props[k]))
	}
	return b.String()
}

// escapeProp escapes a value for a Java properties file.
func escapeProp(v string) string {
	r := strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`)
	return r.Replace(v)
}

func log4jConfig(logPath string) string {
	return fmt.Sprintf(`status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = %s
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%%d] %%p %%m (%%c)%%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.network.name = org.apache.kafka.clients.NetworkClient
logger.network.level = WARN
`, escapeProp(logPath))
}

func (c *Cluster) jvmArgs(n *node, heap string) []string {
	return []string{"-Xmx" + heap, "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Djava.awt.headless=true", "-Dlog4j2.configurationFile=" + filepath.Join(n.dir, "log4j2.properties"),
		"-cp", filepath.Join(c.jars, "*")}
}

// format runs the storage tool on n's log directory, with the SCRAM users.
func (c *Cluster) format(n *node) error {
	args := append(c.jvmArgs(n, "256m"), "kafka.tools.StorageTool", "format", "-t", c.clusterID, "-c", n.props)
	users := make([]string, 0, len(c.opts.SCRAM))
	for u := range c.opts.SCRAM {
		users = append(users, u)
	}
	sort.Strings(users)
	for _, u := range users {
		for _, m := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
			args = append(args, "--add-scram", fmt.Sprintf("%s=[name=%s,password=%s]", m, u, c.opts.SCRAM[u]))
		}
	}
	cmd := exec.Command(c.java, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("node %d: %w\n%s", n.id, err, out)
	}
	return nil
}

func (c *Cluster) startNode(n *node) {
	c.t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	args := append(c.jvmArgs(n, "512m"), "kafka.Kafka", n.props)
	out := filepath.Join(n.dir, fmt.Sprintf("stdout-%d.log", n.restarts))
	n.restarts++
	p, err := proc.Start(c.java, args, out)
	if err != nil {
		c.t.Fatalf("realkafka: node %d: %v", n.id, err)
	}
	n.p = p
}

func (n *node) process() *proc.Process {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.p
}

func (c *Cluster) cleanup() {
	for _, n := range c.nodes {
		if p := n.process(); p != nil {
			p.Kill()
		}
	}
	if c.adminCl != nil {
		c.adminCl.Close()
	}
	if c.t.Failed() {
		for _, n := range c.nodes {
			c.t.Logf("--- realkafka node %d (%s), last lines:\n%s", n.id, n.logPath, tail(n.logPath, 40))
			if p := n.process(); p != nil {
				c.t.Logf("--- realkafka node %d stdout (%s):\n%s", n.id, p.LogPath, strings.Join(p.Tail(20, nil), "\n"))
			}
		}
	}
}

func tail(path string, lines int) string {
	b, _ := os.ReadFile(path)
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

// Admin is a kadm client of the cluster, closed at cleanup.
func (c *Cluster) Admin() *kadm.Client {
	c.adminOnce.Do(func() {
		cl, err := kgo.NewClient(c.ClientOpts()...)
		if err != nil {
			c.t.Fatalf("realkafka: admin client: %v", err)
		}
		c.adminCl, c.admin = cl, kadm.NewClient(cl)
	})
	return c.admin
}

// waitUp waits until every running node is a registered broker and ok
// (when not nil) says the metadata is what the caller waits for. A node
// that exits fails the test with its log.
func (c *Cluster) waitUp(timeout time.Duration, ok func(kadm.Metadata) (bool, string)) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	last := "no answer"
	for {
		want := map[int32]bool{}
		for _, n := range c.nodes {
			p := n.process()
			if p == nil {
				continue
			}
			if !p.Running() {
				c.t.Fatalf("realkafka: node %d exited (%v):\n%s\n%s", n.id, p.WaitErr(), tail(n.logPath, 40), strings.Join(p.Tail(20, nil), "\n"))
			}
			want[n.id] = true
		}
		// Until every listener accepts, asking would only grow the
		// client's backoff.
		if addr := c.closedListener(want); addr != "" {
			last = addr + " does not accept connections"
			if time.Now().After(deadline) {
				c.t.Fatalf("realkafka: cluster not up after %s: %s", timeout, last)
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		md, err := c.Admin().Metadata(ctx)
		cancel()
		if err != nil {
			last = err.Error()
		} else {
			got := 0
			for _, b := range md.Brokers {
				if want[b.NodeID] {
					got++
				}
			}
			done := got == len(want)
			last = fmt.Sprintf("%d of %d brokers registered", got, len(want))
			if done && ok != nil {
				done, last = ok(md)
			}
			if done {
				return
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("realkafka: cluster not up after %s: %s", timeout, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// closedListener returns the address of a client listener of the nodes
// in ids that refuses a connection, or "".
func (c *Cluster) closedListener(ids map[int32]bool) string {
	for _, n := range c.nodes {
		if !ids[n.id] {
			continue
		}
		addr := fmt.Sprintf("127.0.0.1:%d", n.port)
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return addr
		}
		conn.Close()
	}
	return ""
}

// Addrs returns each broker's client listener, host:port, in node order.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = fmt.Sprintf("127.0.0.1:%d", n.port)
	}
	return out
}

// CAFile is the PEM file of the CA that signed the brokers' certificate
// ("" without Options.TLS).
func (c *Cluster) CAFile() string { return c.caFile }

// Version is the Kafka version of the broker's jar (e.g. "4.4.0").
func (c *Cluster) Version() string { return c.version }

// User and Password are the SCRAM credentials Client and MinkArgs use:
// the first user of Options.SCRAM in name order ("" without SCRAM).
func (c *Cluster) User() string     { return c.user }
func (c *Cluster) Password() string { return c.password }

// Mechanism is the SCRAM mechanism Client and MinkArgs use ("" without
// SCRAM).
func (c *Cluster) Mechanism() string {
	if c.user == "" {
		return ""
	}
	return c.opts.Mechanism
}

// ClientOpts are the kgo options that reach the cluster: its seeds, TLS
// trusting CAFile, SASL as User.
func (c *Cluster) ClientOpts() []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(c.Addrs()...)}
	if c.tls != nil {
		opts = append(opts, kgo.DialTLSConfig(c.tls.Clone()))
	}
	if c.user != "" {
		auth := scram.Auth{User: c.user, Pass: c.password}
		if c.opts.Mechanism == "SCRAM-SHA-256" {
			opts = append(opts, kgo.SASL(auth.AsSha256Mechanism()))
		} else {
			opts = append(opts, kgo.SASL(auth.AsSha512Mechanism()))
		}
	}
	return opts
}

// Client returns a client of the cluster (ClientOpts, then opts), closed
// at t's cleanup.
func (c *Cluster) Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append(c.ClientOpts(), opts...)...)
	if err != nil {
		t.Fatalf("realkafka: client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// MinkArgs are the `mink serve` flags that reach the cluster besides
// --kafka (--kafka-tls-ca, --kafka-sasl-mechanism, --kafka-sasl-username),
// and env the variables to add to its environment
// (MINK_KAFKA_SASL_PASSWORD: secrets are not passed as flags).
func (c *Cluster) MinkArgs() (args, env []string) {
	if c.caFile != "" {
		args = append(args, "--kafka-tls-ca", c.caFile)
	}
	if c.user != "" {
		args = append(args, "--kafka-sasl-mechanism", strings.ToLower(c.opts.Mechanism), "--kafka-sasl-username", c.user)
		env = append(env, "MINK_KAFKA_SASL_PASSWORD="+c.password)
	}
	return args, env
}

// CreateTopic creates topic name with partitions and replicationFactor
// (-1: min(Brokers, 3)) and topic configs, and waits until every
// partition has a leader that every broker knows of.
func (c *Cluster) CreateTopic(name string, partitions, replicationFactor int, configs map[string]string) {
	c.t.Helper()
	cfg := map[string]*string{}
	for k, v := range configs {
		cfg[k] = &v
	}
	ctx, cancel := context.WithTimeout(context.Background(), TopicTimeout)
	defer cancel()
	resp, err := c.Admin().CreateTopic(ctx, int32(partitions), int16(replicationFactor), cfg, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		c.t.Fatalf("realkafka: create topic %s: %v", name, err)
	}
	c.waitTopic(name, partitions)
}

// waitTopic waits until each running broker's own metadata has every
// partition of topic with a leader (a client that asks any broker then
// finds it).
func (c *Cluster) waitTopic(name string, partitions int) {
	c.t.Helper()
	for _, n := range c.nodes {
		p := n.process()
		if p == nil || !p.Running() {
			continue
		}
		cl, err := kgo.NewClient(append(c.ClientOpts(), kgo.SeedBrokers(fmt.Sprintf("127.0.0.1:%d", n.port)))...)
		if err != nil {
			c.t.Fatal(err)
		}
		seed := cl.SeedBrokers()[0]
		deadline := time.Now().Add(TopicTimeout)
		last := "no answer"
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			req := kmsg.NewPtrMetadataRequest()
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(name)
			req.Topics = append(req.Topics, rt)
			resp, err := req.RequestWith(ctx, seed)
			cancel()
			if err != nil {
				last = err.Error()
			} else if len(resp.Topics) == 1 {
				t := resp.Topics[0]
				led := 0
				for _, p := range t.Partitions {
					if p.ErrorCode == 0 && p.Leader >= 0 {
						led++
					}
				}
				if t.ErrorCode == 0 && led == partitions {
					break
				}
				last = fmt.Sprintf("error code %d, %d of %d partitions led", t.ErrorCode, led, partitions)
			}
			if time.Now().After(deadline) {
				cl.Close()
				c.t.Fatalf("realkafka: topic %s on node %d after %s: %s", name, n.id, TopicTimeout, last)
			}
			time.Sleep(100 * time.Millisecond)
		}
		cl.Close()
	}
}

// Kill sends SIGKILL to node i (0-based) and waits for it to exit.
func (c *Cluster) Kill(i int) {
	c.t.Helper()
	if p := c.nodes[i].process(); p != nil {
		p.Kill()
	}
}

// Running reports whether node i's process runs.
func (c *Cluster) Running(i int) bool {
	p := c.nodes[i].process()
	return p != nil && p.Running()
}

// Restart starts node i again (after Kill) with its data directory and
// ports, and waits until it is registered and in the ISR of every
// partition it replicates.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	n := c.nodes[i]
	if p := n.process(); p != nil && p.Running() {
		c.t.Fatalf("realkafka: restart node %d: it is running", n.id)
	}
	c.startNode(n)
	c.waitUp(StartTimeout, func(md kadm.Metadata) (bool, string) {
		for _, td := range md.Topics {
			for _, pd := range td.Partitions {
				if slices.Contains(pd.Replicas, n.id) && !slices.Contains(pd.ISR, n.id) {
					return false, fmt.Sprintf("node %d not in the ISR of %s/%d (%v)", n.id, td.Topic, pd.Partition, pd.ISR)
				}
			}
		}
		return true, ""
	})
}

// Leader returns the index of the node leading topic's partition, or -1
// when it has no leader (or the topic is unknown).
func (c *Cluster) Leader(topic string, partition int32) int {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := c.Admin().Metadata(ctx, topic)
	if err != nil {
		c.t.Fatalf("realkafka: metadata: %v", err)
	}
	pd, ok := md.Topics[topic].Partitions[partition]
	if !ok || pd.Leader < 0 {
		return -1
	}
	return int(pd.Leader) - 1
}

// LogPath is the path of node i's server.log.
func (c *Cluster) LogPath(i int) string { return c.nodes[i].logPath }
