// Package testkit is the shared kit of Mink's tests, the way River's
// riversharedtest and testfactory are River's:
//
//   - Main and MainPostgres are the TestMain of every package: they run the
//     tests (with a PostgreSQL server from pgtest for the second) and then
//     fail the run when goroutines are left behind (goleak).
//   - NewFixture gives a job's unit test its world: a fresh schema, an
//     in-process Kafka (kfake) with a topic, a kafka.Client on it, and a
//     table over the topic. Take gives a lease to a holder as the cluster
//     loop does (TakeLease, which the bench uses too).
//   - Eventually and WaitFor poll a condition; MetricValue reads one series
//     of a Prometheus registry.
//
// internal/pgtest stays the one place that finds PostgreSQL (one server
// per test binary); internal/clustertest runs real `mink serve` processes
// and builds on this kit. It is imported only by tests and the bench.
package testkit
