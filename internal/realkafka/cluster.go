package realkafka

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

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
func (c *Cluster) User() string { return c.user }

// Password is User's password.
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
