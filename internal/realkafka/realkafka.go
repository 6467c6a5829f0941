package realkafka

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

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
