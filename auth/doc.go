// Package auth is who may do what on a Mink cluster (docs/design.md §5,
// security): the cluster's secret and the keys derived from it, principals
// and their grants, and the S3 credentials a table load vends.
//
// Every key is derived from one secret kept in Postgres (ClusterSecret,
// DeriveKey), so what one node signs (a forwarded request, a bearer token,
// vended credentials) every node can check without asking another.
//
// Principals live in Postgres (Store, migration 011; `mink principal`
// writes them directly). A principal trades its client id and secret for a
// bearer token at POST /v1/oauth/tokens (Authenticator.ServeToken, the
// OAuth2 client-credentials grant of the Iceberg REST spec); the catalog
// and the admin API check tokens with Authenticator.Bearer, which also
// reads the principal's row (revoked: refused) through a cache of at most
// CacheTTL. TokenSource is the client side, for the `mink` CLI.
package auth
