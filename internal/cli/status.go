package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/internal/readable"
)

// status runs `mink status`: the admin API's overview (the read model
// the console /ui shows, admin.Overview): per node its partition leases
// and the tables it writes; with --leases every lease; then each table's
// progress, files, last commit, schema versions and dead letters.
func status(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	adminURL := adminFlag(fs, adminCredential)
	all := fs.Bool("leases", false, "also list every lease: holder, epoch and expiry")
	if err := parse(fs, args); err != nil {
		return err
	}
	c := adminURL.client()
	o, err := c.Overview(ctx, "")
	if err != nil {
		return reachable(err)
	}
	var leases []admin.LeaseStatus
	if *all {
		if leases, err = c.Leases(ctx); err != nil {
			return reachable(err)
		}
	}
	return printClusterStatus(stdout, o, leases, *all)
}

// printClusterStatus prints o: the node table, the lease table when
// showLeases is set, and each table's status (printTableStatus). Expiries
// and commit times are shown relative to o.Time (both by the database
// clock).
func printClusterStatus(w io.Writer, o *admin.Overview, leases []admin.LeaseStatus, showLeases bool) error {
	if err := printTable(w, "", []string{"NODE", "ADDRESS", "ROLES", "STARTED", "EXPIRES", "PARTITIONS", "WRITER OF (TABLE@EPOCH)"},
		nodeRows(o.Nodes, o.Time)); err != nil {
		return err
	}
	if showLeases {
		fmt.Fprintln(w)
		if err := printTable(w, "", []string{"TABLE", "LEASE", "HOLDER", "EPOCH", "EXPIRES"}, leaseRows(leases, o.Time)); err != nil {
			return err
		}
	}
	for _, t := range o.Tables {
		fmt.Fprintln(w)
		if err := printTableStatus(w, t, o.Time); err != nil {
			return err
		}
	}
	return nil
}

// nodeRows are the lines of the node table: per node its address, roles,
// start, expiry, the number of partition leases it holds and the tables it
// writes (TABLE@EPOCH).
func nodeRows(nodes []admin.NodeSummary, now time.Time) [][]string {
	rows := make([][]string, len(nodes))
	for i, n := range nodes {
		writes := make([]string, len(n.WriterOf))
		for j, wr := range n.WriterOf {
			writes[j] = fmt.Sprintf("%s@%d", wr.Table, wr.Epoch)
		}
		rows[i] = []string{n.ID, n.AdvertiseURL, strings.Join(n.Roles, ","), readable.Ago(n.StartedAt, now),
			expiresIn(&n.ExpiresAt, now), readable.Count(int64(n.PartitionLeases)), orDash(strings.Join(writes, ","))}
	}
	return rows
}

// leaseRows are the lines of the lease table (--leases).
func leaseRows(leases []admin.LeaseStatus, now time.Time) [][]string {
	rows := make([][]string, len(leases))
	for i, l := range leases {
		lease, holder, exp := l.Kind, "-", "-"
		if l.Partition != nil {
			lease = fmt.Sprintf("partition %d", *l.Partition)
		}
		if l.Holder != nil {
			holder, exp = *l.Holder, expiresIn(l.ExpiresAt, now)
		}
		rows[i] = []string{l.Table, lease, holder, strconv.FormatInt(l.Epoch, 10), exp}
	}
	return rows
}

// writerText describes a holding of a writer lease.
func writerText(holder string, epoch int64, expires *time.Time, now time.Time) string {
	return fmt.Sprintf("%s (epoch %d, expires %s)", holder, epoch, expiresIn(expires, now))
}

// printProgress prints a table's topic and writer and the progress of each
// of its partitions.
func printProgress(w io.Writer, t *admin.TablePartitions, topic, writer string, now time.Time) error {
	fmt.Fprintf(w, "%s  topic: %s  writer: %s\n", t.Table, topic, writer)
	if t.KafkaError != "" {
		fmt.Fprintf(w, "  kafka unreachable: %s\n", t.KafkaError)
	}
	// Kafka's offsets, and the lag computed from them, are not known
	// when Kafka could not be asked (they come as 0).
	offset := func(n int64) string {
		if t.KafkaError != "" {
			return "-"
		}
		return strconv.FormatInt(n, 10)
	}
	rows := make([][]string, len(t.Partitions))
	for i, p := range t.Partitions {
		holder := "-"
		if p.Holder != nil {
			holder = *p.Holder
		}
		rows[i] = []string{strconv.Itoa(int(p.Partition)), holder, strconv.FormatInt(p.Epoch, 10), expiresIn(p.LeaseExpiresAt, now),
			offset(p.LogStartOffset), strconv.FormatInt(p.IndexedOffset, 10), strconv.FormatInt(p.CommittedOffset, 10),
			offset(p.HighWatermark), offset(p.Lag), fmt.Sprintf("%.1f", p.RecordsPerSecond)}
	}
	return printTable(w, "  ", []string{"PARTITION", "HOLDER", "EPOCH", "LEASE EXPIRES", "LOG START", "INDEXED", "COMMITTED", "HIGH WATERMARK", "LAG", "RECORDS/S (1 MIN)"}, rows)
}

// printTableStatus prints a table's writer and partitions (printProgress),
// then its data files, last commit, history and refs (printHistory),
// schema versions and dead letters, the
// JSON fields its records had that match no column (count and examples)
// and the writer schemas it met (`mink status`, `mink table status`).
// Times are shown relative to now.
func printTableStatus(w io.Writer, st *admin.TableStatus, now time.Time) error {
	writer := "-"
	if h := st.Writer; h != nil {
		writer = writerText(h.Holder, h.Epoch, &h.ExpiresAt, now)
	}
	progress := &admin.TablePartitions{Table: st.Table, Partitions: st.Partitions, KafkaError: st.KafkaError}
	if err := printProgress(w, progress, st.Topic, writer, now); err != nil {
		return err
	}
	fmt.Fprintf(w, "files: %d, %s (%d bytes)\n", st.Files.Count, readable.Bytes(st.Files.Bytes), st.Files.Bytes)
	fmt.Fprintf(w, "last commit: %s\n", commitText(st.LastCommit, now))
	if err := printHistory(w, &st.History, now); err != nil {
		return err
	}
	fmt.Fprintf(w, "schema: version %d (%d versions)\n", st.SchemaID, st.SchemaVersions)
	if st.DefaultGapRanges > 0 {
		fmt.Fprintf(w, "defaults: %d %s null for columns version %d gives a default (encoded before them): run mink table repair %s\n",
			st.DefaultGapRanges, plural(st.DefaultGapRanges, "range reads", "ranges read"), st.SchemaID, st.Table)
	}
	if _, err := fmt.Fprintf(w, "dead letters: %d (mink scan '%s~dlq')\n", st.DeadLetters, st.Table); err != nil {
		return err
	}
	if st.UnknownFields.Count > 0 || len(st.WriterSchemas) == 0 {
		// JSON (and Protobuf) fields no column holds; registry tables
		// without any print nothing here.
		fmt.Fprintf(w, "unknown JSON fields: %d", st.UnknownFields.Count)
		if len(st.UnknownFields.Examples) > 0 {
			quoted := make([]string, len(st.UnknownFields.Examples))
			for i, e := range st.UnknownFields.Examples {
				quoted[i] = strconv.Quote(e)
			}
			fmt.Fprintf(w, " (e.g. %s)", strings.Join(quoted, ", "))
		}
		fmt.Fprintln(w)
	}
	if len(st.WriterSchemas) == 0 {
		return nil
	}
	fmt.Fprintln(w, "writer schemas (registry id → table schema version):")
	rows := make([][]string, len(st.WriterSchemas))
	for i, ws := range st.WriterSchemas {
		id := fmt.Sprint(ws.RegistryID)
		if ws.MessageIndexes != "" {
			id += " [" + ws.MessageIndexes + "]"
		}
		reason, _, _ := strings.Cut(ws.Error, "\n")
		holds := "dead letters: " + reason
		if ws.SchemaID != nil {
			holds = fmt.Sprintf("version %d", *ws.SchemaID)
		}
		rows[i] = []string{ws.Role, id, holds}
	}
	return printTable(w, "  ", []string{"ROLE", "REGISTRY ID", "TABLE SCHEMA"}, rows)
}

// printHistory prints how far back main's history reaches (its retained
// snapshots, the oldest: what mink scan --as-of reaches) and the refs
// besides main (the consumer-group tags), each with its snapshot, time and
// records. Refs show even while main has no snapshot: a tag may come
// first.
func printHistory(w io.Writer, h *admin.HistoryStatus, now time.Time) error {
	if h.OldestAt == nil {
		fmt.Fprintln(w, "main's history: none yet")
	} else {
		fmt.Fprintf(w, "main's history: %s, oldest %s (%s): the earliest mink scan --as-of reaches\n",
			plural(h.Snapshots, "1 snapshot", readable.Count(h.Snapshots)+" snapshots"), msText(h.OldestAt.UnixMilli()), readable.Ago(*h.OldestAt, now))
	}
	if len(h.Refs) == 0 {
		if h.OldestAt == nil {
			return nil
		}
		_, err := fmt.Fprintln(w, "refs: main only")
		return err
	}
	fmt.Fprintln(w, "refs besides main (mink scan --ref NAME):")
	rows := make([][]string, len(h.Refs))
	for i, r := range h.Refs {
		records := "-"
		if r.Records != nil {
			records = readable.Count(*r.Records)
		}
		rows[i] = []string{r.Name, r.Type, strconv.FormatInt(r.SnapshotID, 10),
			msText(r.Timestamp.UnixMilli()) + " (" + readable.Ago(r.Timestamp, now) + ")", records}
	}
	return printTable(w, "  ", []string{"REF", "TYPE", "SNAPSHOT", "TIME", "RECORDS"}, rows)
}

// commitText describes a table's last commit: "snapshot 123 (sequence
// 4, append by writer a, 5s ago)", or "none yet".
func commitText(c *admin.CommitStatus, now time.Time) string {
	if c == nil {
		return "none yet"
	}
	by := "a table load"
	if c.Writer != "" {
		by = "writer " + c.Writer
	}
	return fmt.Sprintf("snapshot %d (sequence %d, %s by %s, %s)", c.SnapshotID, c.SequenceNumber, c.Operation, by, readable.Ago(c.CommittedAt, now))
}

// expiresIn shows an expiry (by the database clock) relative to now, to
// the second: "in 9s", or "expired".
func expiresIn(at *time.Time, now time.Time) string {
	return readable.Until(at, now)
}

// orDash is s, or "-" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
