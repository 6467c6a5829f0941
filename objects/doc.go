// Package objects is Mink's S3-compatible read API (docs/design.md §5): engines
// read table metadata files and Parquet data files from any node, path
// style, at /<warehouse>/<key>, with GET (and every Range form) and HEAD.
// Writes answer 405 MethodNotAllowed: Mink is the only writer.
//
// # Metadata files
//
// Metadata JSON, manifest lists and manifests (<ns>/<name>/metadata/<file>)
// live in PostgreSQL (metadata_files). They never change once written, so
// every node keeps the ones it read in a small in-memory LRU. Any node
// serves them; a node that cannot reach PostgreSQL answers one it does not
// hold with 503 SlowDown and Retry-After (docs/design.md §3.4).
//
// # Data files
//
// A data file (<ns>/<name>/data/<partition>/<start>-<end>-<version>.parquet)
// is the deterministic encoding of one indexed range (docs/design.md §4.5). It is
// built on demand by its owner, the live server node that ranks highest for
// its key (cluster.Owner, docs/design.md §3.5), and cached on the owner's disk. A
// read is answered by the first of these that applies:
//
//  1. This node's disk cache has the file: serve it. Owner or not, the
//     bytes are the same, and this is how cached files stay readable while
//     PostgreSQL and Kafka are down.
//  2. The read is not marked forwarded, and another node owns the file:
//     forward the read to it (same method, path, headers), marked with
//     X-Mink-Forwarded and signed with the cluster's forward key
//     (auth.SignForward, over https when the owner advertises https), and
//     stream its answer back, whatever the status.
//  3. Otherwise (this node owns the file, the read was forwarded here, or
//     the owner could not be reached or sent no headers in time), build it
//     here: the Builder is called once per key however many readers wait
//     (singleflight); every waiter is served the same bytes, and the file is
//     cached.
//
// A read marked forwarded whose signature does not verify (auth.VerifyForward:
// another key, a changed method or URI, signed for another node, a time off
// by more than auth.ForwardWindow) answers 403 AccessDenied: a client cannot
// make a node build a file it does not own, nor skip the checks a direct
// read gets.
//
// A forwarded read is always served by the node it was sent to, even if its
// own view of the members names another owner: views differ for a moment
// while nodes come and go, and a read must never bounce between them.
//
// A non-owner that builds because the owner did not answer caches the file
// too. A Parquet reader sends several range reads per file (footer, then
// column chunks); without a copy each of them would wait for the dead owner
// again and rebuild the whole file. The copy is never wrong, as the bytes
// are the same everywhere; it costs disk until the LRU evicts it. An owner
// that could not be connected to is skipped for Config.ForwardBackoff.
//
// # Answers
//
// Bodies are the bytes exactly as built, through http.ServeContent: HEAD,
// the three Range forms (bytes=a-b, bytes=a-, bytes=-n) with 206 and 416,
// conditionals (If-None-Match, If-Match, If-Range …), Content-Length,
// Accept-Ranges. The Range header is read by RFC 9110 §14 before
// ServeContent sees it (ranges.go): an invalid one, another unit, or a set
// of several ranges is ignored (200, the whole object; S3 serves no
// multipart ranges either); a valid one that selects nothing (bytes=-0, a
// first position at or past the length) answers 416 InvalidRange with
// Content-Range "bytes */<length>"; positions past the end are clamped.
// HEAD answers GET's status and headers, as S3's HeadObject does. The ETag is the quoted hex SHA-256 of the content; a data
// file's Last-Modified is one fixed date (its bytes never change, on any
// node), a metadata file's is its created_at. Errors are S3 XML documents
// (NoSuchKey, NoSuchBucket, MethodNotAllowed, InvalidRange, InternalError,
// SlowDown); a rebuild whose checksum differs from the recorded one is
// never served and answers 500 InternalError. No error's request id,
// nor the message of a read's failure, holds "301", which older
// gocloud.dev S3 clients take for a missing bucket (newRequestID).
//
// # Access
//
// Under auth.ModePrincipals (Config.Auth) every request must be signed with
// AWS Signature V4 by credentials auth.Vend made, and read a key below
// their prefixes (auth.Verifier, Credentials.AllowsKey); refusals are S3's
// errors (AccessDenied, ExpiredToken, SignatureDoesNotMatch,
// InvalidAccessKeyId …, docs/design.md §5). A read forwarded by a node
// (signed, auth.VerifyForward, by a live member: cluster.Senders) is not
// checked again: its sender did.
//
// Under every mode, a key is served only below a live table's location
// (tables.Locations, an in-memory view trusted tables.LocationsTTL): a
// deleted table's files, cached or not, answer 404 NoSuchKey on every node
// once its DELETE has answered, and their cached copies are dropped.
package objects
