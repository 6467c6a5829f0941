// Package testkit is the shared kit of Mink's tests, the way River's
// riversharedtest and testfactory are River's:
//
//   - Main and MainPostgres are the TestMain of every package (each in its
//     main_test.go): they run the tests, with a PostgreSQL server from
//     pgtest for the second, and then fail the run when goroutines are
//     left behind (goleak).
//   - NewFixture gives a job's unit test its world: a fresh schema, an
//     in-process Kafka (NewKafka: kfake and Mink's client on it) with a
//     topic, and a table over the topic. Take gives a lease to a holder as
//     the cluster loop does (TakeLease, which the bench uses too); Start
//     runs a job in the background and awaits it at cleanup.
//   - WaitFor and Eventually poll a condition; MetricValue and
//     CounterValue read one series of a Prometheus registry; Column reads
//     one column of a query.
//   - USGSEvents, USGSSchema and KafkaField are the shared test data.
//
// internal/pgtest stays the one place that finds PostgreSQL (one server
// per test binary). Package proc runs `mink serve` processes for
// internal/clustertest, which builds on this kit, and for the bench. It is
// imported only by tests and the bench.
package testkit
