// Package catalog serves Mink's tables over the Iceberg REST catalog
// protocol (apache/iceberg, open-api/rest-catalog-open-api.yaml), read-only,
// to Spark, Trino, Flink, DuckDB, PyIceberg and iceberg-go.
//
// Every node answers the catalog; nothing here is owned by a lease. A table
// load reads the table's committed metadata location and the metadata JSON
// stored under it (the writer swaps both in one transaction, docs/design.md §4.6) and
// returns the JSON verbatim, so what an engine plans from is byte for byte
// the file the S3 API serves at that location. A [Loader] may answer a newer
// head instead: package tail commits a child snapshot holding the Kafka
// tail (zero lag, docs/design.md §4.4); until one is installed loads pass
// through.
//
// # What engines depend on
//
//   - GET /v1/config lists in "endpoints" only the read routes served here
//     (scan planning's among them).
//     Clients that negotiate (iceberg-go, Java ≥ 1.7) then refuse writes
//     themselves; a missing list would make them assume every write
//     route exists. Its "defaults" point the engine's S3 client at this node
//     (s3.endpoint = the advertised URL, path-style addressing, region).
//   - LoadTableResult repeats those keys in its "config", with the static
//     credentials the S3 API accepts (auth none) or vended ones (auth
//     principals), because DuckDB ignores the catalog-level defaults.
//     Trino (476) takes only the credentials of a load and reads endpoint,
//     path style and region from its own catalog file (trinodb/trino#25187).
//   - Namespaces are the dotted namespace column of the tables table, read as
//     a tree: a namespace exists while a table lives in it or below it.
//     Multipart namespaces travel joined by the unit separator 0x1F (%1F in a
//     URL) in paths and in ?parent=; "." is accepted too, since no level may
//     contain it. A namespace with an empty level answers 400
//     BadRequestException (no catalog can hold one).
//   - Listings page only when the request carries pageToken (possibly empty),
//     as the spec requires; the token is the last name returned, opaque to
//     clients.
//   - Table loads answer an ETag that changes with the metadata location (and
//     with this node's table config), and 304 to a matching If-None-Match
//     (RFC 9110 §13.1.2: "*" or a list of entity-tags, weak comparison; a
//     field that does not parse is ignored).
//   - Mink has no views, but the view reads are served and advertised (an
//     empty list, 404 NoSuchViewException): Trino and Spark list views
//     beside tables, and some clients fail outright on a catalog whose
//     endpoints leave them out.
//   - Writes (create, commit, drop, rename, register, transactions, views,
//     namespace changes) answer 403 ForbiddenException; metrics reports are
//     accepted and discarded (204): clients that do not negotiate send them
//     after every scan, and a failure there would only add noise.
//   - Under Config.Auth (auth principals, docs/design.md §5) every route
//     but POST /v1/oauth/tokens needs a bearer token (401
//     NotAuthorizedException with a WWW-Authenticate challenge); a table
//     outside the principal's grants is absent from lists and answers 404
//     NoSuchTableException like a missing one, a namespace with no visible
//     table 404 NoSuchNamespaceException; each table load vends S3
//     credentials for the table's keys (config and storage-credentials),
//     refreshed by GET …/tables/{table}/credentials.
//   - Server-side scan planning (planning.go; docs/design.md §5): POST
//     …/plan, GET and DELETE …/plan/{plan-id}, POST …/tasks, advertised.
//     Plans are computed on request and answered "completed"; plan ids
//     and plan-task tokens are stateless (the table's row id, snapshot,
//     filter and page, base64url JSON). Files come from their rows in
//     Postgres, pruned by iceberg-go's inclusive metrics rules (prune.go)
//     on any column, tail files of zero-lag loads included; when the rows
//     do not add up to the snapshot's summary, or the snapshot is not on
//     main, from the manifests with iceberg-go's planner. More than
//     Config.PlanTaskFiles files are answered as plan tasks.
//   - Postgres that cannot be reached within Config.QueryTimeout makes a
//     request answer 503 ServiceUnavailableException with Retry-After,
//     never hang (docs/design.md §3.4).
package catalog
