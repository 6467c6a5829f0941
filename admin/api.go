package admin

import (
	"time"

	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

// The bodies of the admin API's answers (docs/design.md §5, "Admin API"),
// shared by the handlers and by Client. Errors answer {"error": message}.

// TableList is the answer of GET /admin/v1/tables: every table, dead-letter
// tables included, by name.
type TableList struct {
	Tables []*tables.Table `json:"tables"`
}

// CreatedTable is the answer of POST /admin/v1/tables: the table (its
// schema the newest version) and, for registry formats, the plan the
// create stored (docs/design.md §4.7).
type CreatedTable struct {
	*tables.Table
	Plan *schemas.Plan `json:"plan,omitempty"`
}

// CreatePlan is the answer of POST /admin/v1/tables?dry_run=true: the
// schema the table would have (after its plan's versions) and, for
// registry formats, the plan; nothing is stored.
type CreatePlan struct {
	Schema *iceberg.Schema `json:"schema"`
	Plan   *schemas.Plan   `json:"plan,omitempty"`
}

// NodeList is the answer of GET /admin/v1/nodes: the live nodes, by id.
type NodeList struct {
	Nodes []NodeStatus `json:"nodes"`
}

// LeaseList is the answer of GET /admin/v1/leases: every lease, by table
// name, the writer lease first.
type LeaseList struct {
	Leases []LeaseStatus `json:"leases"`
}

// PartitionStatus is one partition's progress.
type PartitionStatus struct {
	Partition int32 `json:"partition"`
	// IndexedOffset is how far the partition's records are built into
	// data files, whoever built them: the end of the last indexed range,
	// or the content end of the table or its dead-letter table when a
	// table load's tail files reach further (admin/sql/partitions.sql).
	IndexedOffset int64 `json:"indexed_offset"`
	// CommittedOffset is the offset below which every record is in the
	// current snapshot of the table or of its dead-letter table (the
	// lesser of their content ends, docs/design.md §4.4, read by
	// commit.CommittedOffsets), whether the writer committed it or a
	// zero-lag table load did.
	CommittedOffset int64 `json:"committed_offset"`
	LogStartOffset  int64 `json:"log_start_offset"`
	LastStable      int64 `json:"last_stable_offset"`
	HighWatermark   int64 `json:"high_watermark"`
	// Lag is last stable offset − indexed offset: records Kafka can serve
	// that are in no data file yet.
	Lag int64 `json:"lag"`
	// RecordsPerSecond is the indexing rate over the last minute.
	// RecordsPerSecond is the indexing rate over the last minute: the
	// records of the ranges indexed in the last minute (database clock)
	// / 60, the same on every node.
	RecordsPerSecond float64 `json:"records_per_second"`
	// Holder is the node holding the partition's lease, null when it is
	// free or expired; LeaseExpiresAt is then null too.
	Holder         *string    `json:"holder"`
	LeaseExpiresAt *time.Time `json:"lease_expires_at"`
	Epoch          int64      `json:"epoch"`
}

// TablePartitions is the answer of GET
// /admin/v1/tables/{ns}.{name}/partitions: the progress of each partition
// of the table, by partition.
type TablePartitions struct {
	Table      string            `json:"table"`
	Partitions []PartitionStatus `json:"partitions"`
	// KafkaError is set when Kafka could not be asked for its offsets
	// (they are then 0).
	KafkaError string `json:"kafka_error,omitempty"`
}

// TableStatus is the answer of GET /admin/v1/tables/{ns}.{name}/status:
// the table's progress and what its records did not fit.
type TableStatus struct {
	Table string `json:"table"`
	// Topic is the Kafka topic the table serves.
	Topic      string            `json:"topic"`
	Partitions []PartitionStatus `json:"partitions"`
	// KafkaError is set when Kafka could not be asked for its offsets.
	KafkaError string `json:"kafka_error,omitempty"`
	// Writer is the holder of the table's writer lease (null when none).
	Writer *WriterStatus `json:"writer"`
	// UnknownFields counts the JSON fields, at any depth, of the records
	// indexed so far that match no column (left out of rows, or the reason
	// of a dead letter), counted once when their range was indexed, on
	// any node.
	UnknownFields UnknownFieldsStatus `json:"unknown_fields"`
	// DeadLetters is the number of rows of <name>~dlq's current snapshot,
	// whoever committed them: its committed data files and the tail files
	// table loads committed (rows dropped below Kafka's log start no
	// longer count; admin/sql/dead_letters.sql).
	DeadLetters int64 `json:"dead_letters"`
	// SchemaID is the table's newest schema version (Iceberg schema-id;
	// docs/design.md §4.7) and SchemaVersions how many it has had.
	SchemaID       int `json:"schema_id"`
	SchemaVersions int `json:"schema_versions"`
	// DefaultGapRanges counts the committed data files of the table
	// encoded with a version that lacks a column to which SchemaID gives
	// an Avro default: their rows read null there until `mink table
	// repair` rebuilds them (tables.DefaultGaps; docs/design.md §4.7).
	DefaultGapRanges int64 `json:"default_gap_ranges"`
	// WriterSchemas are the registry schemas the table's records were
	// written with, in the order the table met them: the schema version
	// that holds each one's records, or why they are dead letters.
	WriterSchemas []schemas.WriterSchemaInfo `json:"writer_schemas,omitempty"`
	// Files are the data files of the table's current snapshot (indexed
	// and tail files; admin/sql/table_files.sql).
	Files FilesStatus `json:"files"`
	// LastCommit is the table's current snapshot, null before the first
	// commit.
	LastCommit *CommitStatus `json:"last_commit"`
	// History is how far back time travel reaches and the table's refs
	// other than main.
	History HistoryStatus `json:"history"`
}

// HistoryStatus is what a table's metadata keeps of its history
// (docs/design.md §4.6, §4.8).
type HistoryStatus struct {
	// Snapshots is the number of main's retained snapshots (after
	// thinning and expiry): its snapshot-log entries, what FOR TIMESTAMP
	// AS OF (mink scan --as-of) picks from. The tags' snapshots are in
	// Refs, not counted here.
	Snapshots int64 `json:"snapshots"`
	// OldestAt is the timestamp of main's oldest retained snapshot, its
	// first snapshot-log entry: the earliest time FOR TIMESTAMP AS OF
	// (mink scan --as-of) reaches. Null before the first commit.
	OldestAt *time.Time `json:"oldest_at"`
	// Refs are the refs other than main (consumer-group tags), by name.
	Refs []RefStatus `json:"refs"`
}

// RefStatus is a ref other than main and the snapshot it names.
type RefStatus struct {
	Name string `json:"name"`
	// Type is the Iceberg ref type: "tag" (Mink commits no other branch).
	Type       string `json:"type"`
	SnapshotID int64  `json:"snapshot_id"`
	// Timestamp is the snapshot's timestamp-ms.
	Timestamp time.Time `json:"timestamp"`
	// Records is its summary's total-records: the rows the ref reads;
	// null for a snapshot committed before Mink kept the count.
	Records *int64 `json:"records"`
}

// FilesStatus counts data files and their bytes.
type FilesStatus struct {
	Count int64 `json:"count"`
	Bytes int64 `json:"bytes"`
}

// CommitStatus is a snapshot as the overview shows it: the last commit.
type CommitStatus struct {
	SnapshotID     int64 `json:"snapshot_id"`
	SequenceNumber int64 `json:"sequence_number"`
	// Operation is the snapshot's Iceberg operation: append, replace,
	// overwrite or delete.
	Operation string `json:"operation"`
	// CommittedAt is when it was committed (database clock).
	CommittedAt time.Time `json:"committed_at"`
	// Writer is the node that committed it under the table's writer lease;
	// empty when a table load committed it (docs/design.md §4.4).
	Writer string `json:"writer,omitempty"`
}

// Overview is the answer of GET /admin/v1/overview: the cluster as
// `mink status` prints it and the console (/ui) shows it, one read model
// for both (Handler.Overview).
type Overview struct {
	// Time is when it was read, by the database clock: the expiries and
	// commit times in it compare with Time, not with a reader's clock.
	Time time.Time `json:"time"`
	// Nodes are the live nodes, by id.
	Nodes []NodeSummary `json:"nodes"`
	// Tables are the status of every table but dead-letter tables, by
	// name (or of the one table asked for).
	Tables []*TableStatus `json:"tables"`
}

// NodeSummary is a live node and how many leases it holds.
type NodeSummary struct {
	ID           string   `json:"id"`
	AdvertiseURL string   `json:"address"`
	Roles        []string `json:"roles"`
	// StartedAt is when it registered; ExpiresAt when its row expires
	// unless renewed (database clock).
	StartedAt time.Time `json:"started_at"`
	ExpiresAt time.Time `json:"expires_at"`
	// PartitionLeases is the number of unexpired partition leases it holds.
	PartitionLeases int `json:"partition_leases"`
	// WriterOf are the tables whose writer lease it holds, by name.
	WriterOf []WriterOf `json:"writer_of"`
}

// WriterOf is a table whose writer lease a node holds, and its epoch.
type WriterOf struct {
	Table string `json:"table"`
	Epoch int64  `json:"epoch"`
}

// AlterResult is the answer of POST /admin/v1/tables/{ns}.{name}/schema.
type AlterResult struct {
	Table string `json:"table"`
	// Changed says whether the alter stored a new schema version; false
	// when the newest version already took the schema as it is.
	Changed bool `json:"changed"`
	// SchemaID is the table's newest schema version and Schema that
	// version (with _kafka and the field ids Mink assigned).
	SchemaID int             `json:"schema_id"`
	Schema   *iceberg.Schema `json:"schema"`
}

// WriterStatus is the holder of a writer lease.
type WriterStatus struct {
	Holder    string    `json:"holder"`
	Epoch     int64     `json:"epoch"`
	ExpiresAt time.Time `json:"expires_at"`
}

// UnknownFieldsStatus is a count of unknown JSON fields and the first
// distinct field paths seen (at most 10; by partition, then first seen),
// e.g. "vbeln", "address.zip", "items.element.sku".
type UnknownFieldsStatus struct {
	Count    int64    `json:"count"`
	Examples []string `json:"examples"`
}

// NodeStatus is a live node and the leases it holds.
type NodeStatus struct {
	ID           string    `json:"id"`
	AdvertiseURL string    `json:"address"`
	Roles        []string  `json:"roles"`
	ExpiresAt    time.Time `json:"expires_at"`
	// Leases are the scopes of the unexpired leases it holds, by scope.
	Leases []string `json:"leases"`
}

// LeaseStatus is one lease. Holder is null when the lease is free or
// expired.
type LeaseStatus struct {
	Scope     string     `json:"scope"`
	Table     string     `json:"table"`
	Kind      string     `json:"kind"`
	Partition *int32     `json:"partition,omitempty"`
	Holder    *string    `json:"holder"`
	Epoch     int64      `json:"epoch"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// errorBody is the body of every error answer.
type errorBody struct {
	Error string `json:"error"`
}
