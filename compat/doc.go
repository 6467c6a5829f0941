// Package compat is Mink's compatibility suite (`make compat`): Mink run
// against what its users run, not against parts of our own choosing.
//
//   - A real Apache Kafka (4.x, KRaft, started from Maven Central's jars by
//     internal/realkafka), with records written by librdkafka through
//     confluent-kafka from PyPI (compat/clients): idempotent and
//     transactional producers, committed and aborted transactions, the
//     gzip, snappy, lz4 and zstd codecs, a real consumer group's commits.
//   - The engines, each reading Mink through the REST catalog and the S3
//     API with access control on (OAuth2 client credentials, vended
//     credentials), configured by the very block README shows
//     (compat/engines/<engine>.conf.md), and comparing every value with
//     the source: each engine is a script, compat/engines/<engine>.py,
//     that takes a spec (catalog, credential, tables, the ids each
//     snapshot holds) and prints one JSON line per check.
//
// The tests run only when MINK_COMPAT=1 (make compat sets it and installs
// the engines: scripts/ensure-python, scripts/ensure-maven); `make test`
// skips them. At the end the suite prints its matrix: component, version,
// check, result, time.
//
// It holds no code outside its tests.
package compat
