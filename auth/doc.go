// Package auth is who may do what on a Mink cluster (docs/design.md §5,
// security): the cluster's secret and the keys derived from it, principals
// and their grants, and the S3 credentials a table load vends.
//
// Every key is derived from one secret kept in Postgres (ClusterSecret,
// DeriveKey), so what one node signs (a forwarded request, a bearer token,
// vended credentials) every node can check without asking another.
package auth
