// Package clustertest runs real `mink serve` processes for tests of the
// cluster rules (docs/design.md §3.4): the binary is built once per test binary
// (or taken from MINK_TEST_BINARY), Kafka is an in-process kfake cluster
// reached over TCP, PostgreSQL is a schema of its own (pgtest.Schema; the
// test binary's TestMain must call testkit.MainPostgres). A test starts nodes,
// produces continuously while it crashes, stops, pauses or adds nodes,
// observes the leases in Postgres (ReadLeases, WaitTakeovers,
// SampleLeases) or through the admin API (AdminLeases, AdminNodes), and
// ends by reading the table with apache/iceberg-go through a node's REST
// catalog and S3 API (WaitExact): every acknowledged record exactly once,
// with its bytes, and nothing else.
//
//	env := clustertest.New(t)
//	a, b := env.StartNode(clustertest.NodeOptions{}), env.StartNode(clustertest.NodeOptions{})
//	env.CreateRawTable(a.URL(), "test", "events", "events", 4)
//	prod := env.StartProducer("events", 4, 200)
//	a.Kill()
//	...
//	clustertest.WaitExact(t, b.URL(), "test.events", prod.Stop(t))
//
// Nodes run with lease_ttl 3 s (rounds every second), flush and commit
// intervals of 200 ms, and log to a file whose tail the test prints when
// it fails. Every process is killed at cleanup.
//
// With the RealKafka option the nodes run against a real Apache Kafka
// (internal/realkafka) instead, its TLS and SASL settings passed to them:
//
//	k := realkafka.Start(t, realkafka.Options{Brokers: 3})
//	env := clustertest.New(t, clustertest.RealKafka(k))
//
// It is imported only by tests.
package clustertest
