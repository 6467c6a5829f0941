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
)

// clusterStatus is what `mink status` shows, as the admin API answers it.
type clusterStatus struct {
	nodes  []admin.NodeStatus
	leases []admin.LeaseStatus
	// tables are the progress of every table but dead-letter tables, by
	// name.
	tables []*admin.TablePartitions
}

// status runs `mink status`: per node its partition leases and the tables
// it writes; with --leases every lease; then each table's progress.
func status(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	adminURL := adminFlag(fs, adminCredential)
	all := fs.Bool("leases", false, "also list every lease: holder, epoch and expiry")
	if err := parse(fs, args); err != nil {
		return err
	}
	st, err := fetchClusterStatus(ctx, adminURL.client())
	if err != nil {
		return reachable(err)
	}
	return printClusterStatus(stdout, st, *all, time.Now())
}

// fetchClusterStatus asks the admin API for the nodes, the leases and the
// progress of each table.
func fetchClusterStatus(ctx context.Context, c *admin.Client) (*clusterStatus, error) {
	var st clusterStatus
	var err error
	if st.nodes, err = c.Nodes(ctx); err != nil {
		return nil, err
	}
	if st.leases, err = c.Leases(ctx); err != nil {
		return nil, err
	}
	ts, err := c.Tables(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if t.DLQOf != nil {
			continue
		}
		parts, err := c.Partitions(ctx, t.FullName())
		if err != nil {
			return nil, err
		}
		// The table's name as the list gave it, whatever the answer says.
		parts.Table = t.FullName()
		st.tables = append(st.tables, parts)
	}
	return &st, nil
}

// printClusterStatus prints st: the node table, the lease table when
// leases is set, and each table's progress. Expiries are shown relative to
// now.
func printClusterStatus(w io.Writer, st *clusterStatus, leases bool, now time.Time) error {
	if err := printTable(w, "", []string{"NODE", "ADDRESS", "ROLES", "EXPIRES", "PARTITIONS", "WRITER OF (TABLE@EPOCH)"},
		nodeRows(st.nodes, st.leases, now)); err != nil {
		return err
	}
	if leases {
		fmt.Fprintln(w)
		if err := printTable(w, "", []string{"TABLE", "LEASE", "HOLDER", "EPOCH", "EXPIRES"}, leaseRows(st.leases, now)); err != nil {
			return err
		}
	}
	for _, t := range st.tables {
		fmt.Fprintln(w)
		if err := printProgress(w, t, writerOf(st.leases, t.Table, now)); err != nil {
			return err
		}
	}
	return nil
}

// nodeRows are the lines of the node table: per node its address, roles,
// expiry, the number of partition leases it holds and the tables it writes
// (TABLE@EPOCH).
func nodeRows(nodes []admin.NodeStatus, leases []admin.LeaseStatus, now time.Time) [][]string {
	partitions := map[string]int{}
	writes := map[string][]string{}
	for _, l := range leases {
		if l.Holder == nil {
			continue
		}
		if l.Kind == "writer" {
			writes[*l.Holder] = append(writes[*l.Holder], fmt.Sprintf("%s@%d", l.Table, l.Epoch))
		} else {
			partitions[*l.Holder]++
		}
	}
	rows := make([][]string, len(nodes))
	for i, n := range nodes {
		rows[i] = []string{n.ID, n.AdvertiseURL, strings.Join(n.Roles, ","), expiresIn(&n.ExpiresAt, now),
			strconv.Itoa(partitions[n.ID]), orDash(strings.Join(writes[n.ID], ","))}
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

// writerOf describes the holding of the writer lease of table, "-" when
// none holds it.
func writerOf(leases []admin.LeaseStatus, table string, now time.Time) string {
	writer := "-"
	for _, l := range leases {
		if l.Table == table && l.Kind == "writer" && l.Holder != nil {
			writer = writerText(*l.Holder, l.Epoch, l.ExpiresAt, now)
		}
	}
	return writer
}

// writerText describes a holding of a writer lease.
func writerText(holder string, epoch int64, expires *time.Time, now time.Time) string {
	return fmt.Sprintf("%s (epoch %d, expires %s)", holder, epoch, expiresIn(expires, now))
}

// printProgress prints a table's writer and the progress of each of its
// partitions (mink status, mink table status).
func printProgress(w io.Writer, t *admin.TablePartitions, writer string) error {
	fmt.Fprintf(w, "%s  writer: %s\n", t.Table, writer)
	if t.KafkaError != "" {
		fmt.Fprintf(w, "  kafka unreachable: %s\n", t.KafkaError)
	}
	rows := make([][]string, len(t.Partitions))
	for i, p := range t.Partitions {
		holder := "-"
		if p.Holder != nil {
			holder = *p.Holder
		}
		rows[i] = []string{strconv.Itoa(int(p.Partition)), holder, strconv.FormatInt(p.Epoch, 10),
			strconv.FormatInt(p.IndexedOffset, 10), strconv.FormatInt(p.CommittedOffset, 10),
			strconv.FormatInt(p.HighWatermark, 10), strconv.FormatInt(p.Lag, 10), fmt.Sprintf("%.1f", p.RecordsPerSecond)}
	}
	return printTable(w, "  ", []string{"PARTITION", "HOLDER", "EPOCH", "INDEXED", "COMMITTED", "HIGH WATERMARK", "LAG", "RECORDS/S (1 MIN)"}, rows)
}

// printTableStatus prints what mink status prints for one table, then the
// JSON fields its records had that match no column (count and examples)
// and its dead letters (`mink table status`).
func printTableStatus(w io.Writer, st *admin.TableStatus, now time.Time) error {
	writer := "-"
	if h := st.Writer; h != nil {
		writer = writerText(h.Holder, h.Epoch, &h.ExpiresAt, now)
	}
	progress := &admin.TablePartitions{Table: st.Table, Partitions: st.Partitions, KafkaError: st.KafkaError}
	if err := printProgress(w, progress, writer); err != nil {
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
	if _, err := fmt.Fprintf(w, "dead letters: %d (mink scan '%s~dlq')\n", st.DeadLetters, st.Table); err != nil {
		return err
	}
	fmt.Fprintf(w, "schema: version %d (%d versions)\n", st.SchemaID, st.SchemaVersions)
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

// expiresIn shows an expiry (by the database clock) relative to now (by
// this machine's clock), to the second: "in 9s", or "expired".
func expiresIn(at *time.Time, now time.Time) string {
	if at == nil || at.IsZero() {
		return "-"
	}
	d := at.Sub(now).Round(time.Second)
	if d < 0 {
		return "expired"
	}
	return "in " + d.String()
}

// orDash is s, or "-" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
