package realkafka

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/minkhq/mink/internal/testkit/proc"
)

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
