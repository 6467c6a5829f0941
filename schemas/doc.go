// Package schemas keeps a table's schema versions: registry schemas by id,
// table schema versions, evolution (docs/design.md §4.7).
//
// A table's first schema comes from [Initial]: _kafka (field ids 1-10), then
// the value columns with ids from 11 in pre-order. Every later version comes
// from [Evolve], which merges the columns of a schema the table has not seen
// (a new registry schema id, a new inferred JSON shape) into the current
// version under the Iceberg spec's "Schema Evolution" rules: fields are
// matched by name, may be added (always optional) at any depth, promoted
// (int→long, float→double, wider decimal precision) or made optional, and are
// never removed, so a field dropped by a producer keeps its column and id and
// reads null, and a field re-added later finds its old id. Anything else is an
// [*IncompatibleError]: the records of that schema go to the dead-letter
// table, and the table schema does not change.
//
// Evolution is a pure function of (current schema, last column id, incoming
// columns): the same inputs give the same schema and the same ids on every
// node, so no node needs to ask another what a version looks like.
package schemas
