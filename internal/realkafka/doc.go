// Package realkafka runs Apache Kafka brokers (KRaft mode, no ZooKeeper)
// as processes for tests that must meet the real broker rather than the
// in-process kfake: its compaction, retention, replication and leader
// elections, its TLS and SASL/SCRAM.
//
// The broker is the kafka_2.13 jar from Maven Central and its
// dependencies, resolved by `scripts/ensure-maven kafka` (run from the
// module root that `go env GOMOD` names; compat/deps/kafka/pom.xml) or
// taken from the folder MINK_KAFKA_JARS names. `java` comes from
// JAVA_HOME/bin when JAVA_HOME is set, else from PATH (Java 17 or newer).
//
//	c := realkafka.Start(t, realkafka.Options{Brokers: 3})
//	c.CreateTopic("events", 4, 3, map[string]string{"min.insync.replicas": "2"})
//	cl := c.Client(t, kgo.RequiredAcks(kgo.AllISRAcks()))
//	...
//	c.Kill(c.Leader("events", 0))
//	c.Restart(i)
//
// Every node is a combined broker and controller: one node is a quorum of
// one voter, three nodes a quorum of three (static voters,
// controller.quorum.voters), formatted with kafka.tools.StorageTool and
// started as `java kafka.Kafka server.properties` with -Xmx512m. Each node
// has three loopback listeners on free ports: EXTERNAL (the one clients
// reach, Addrs; PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL as Options
// say), INTERNAL (PLAINTEXT, between brokers) and CONTROLLER. SCRAM users
// are written into the metadata log when the storage is formatted
// (--add-scram), for SCRAM-SHA-256 and SCRAM-SHA-512 both; no authorizer
// is configured, so every authenticated user may do everything.
//
// Start returns once every broker is registered and answers metadata.
// Each node logs to server.log in its directory under t.TempDir(); when
// the test fails the last lines of each log are printed. Every process is
// killed at cleanup, and by the kernel if the test binary dies
// (internal/testkit/proc).
//
// The tests of this package, and those of other packages that start a
// real Kafka, run only with MINK_COMPAT=1 (`make compat`): `make test`
// never needs Java. It is imported only by tests.
package realkafka
