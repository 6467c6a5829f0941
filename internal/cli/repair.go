package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/minkhq/mink/writer"
)

// alterCmd runs `mink table alter NS.NAME --schema FILE`.
func alterCmd(ctx context.Context, fs *flag.FlagSet, adminURL *target, args []string, stdout io.Writer) error {
	schema := fs.String("schema", "", "Iceberg schema JSON file the table's columns evolve to take (required)")
	var name string
	if err := parse(fs, args, &name); err != nil {
		return err
	}
	switch {
	case name == "":
		return usagef("missing table name NS.NAME")
	case *schema == "":
		return usagef("--schema is required")
	}
	if _, _, err := splitTableName(name); err != nil {
		return err
	}
	b, err := os.ReadFile(*schema)
	if err != nil {
		return err
	}
	if !json.Valid(b) {
		return fmt.Errorf("schema file %s is not valid JSON (expected an Iceberg schema: {\"type\":\"struct\",\"fields\":[…]})", *schema)
	}
	c := adminURL.client()
	res, err := c.AlterTable(ctx, name, b)
	if err != nil {
		return reachable(namedTable(name, err))
	}
	if !res.Changed {
		fmt.Fprintf(stdout, "%s already takes this schema (schema version %d): nothing changed\n", name, res.SchemaID)
		return nil
	}
	fmt.Fprintf(stdout, "altered %s: schema version %d; files built from now on use it\n", name, res.SchemaID)
	fmt.Fprintf(stdout, "run `mink table repair %s` to move the dead letters it now decodes into the table\n", name)
	return nil
}

// defaultRepairBatch is how many ranges one call of `mink table repair`
// examines: each is read from Kafka and built within the admin API's 30 s.
const defaultRepairBatch = 20

// repairCmd runs `mink table repair NS.NAME`: batches of writer.Repair
// through the admin API, with progress after each, then a summary.
func repairCmd(ctx context.Context, fs *flag.FlagSet, adminURL *target, args []string, stdout io.Writer) error {
	batch := fs.Int("batch", defaultRepairBatch, fmt.Sprintf("ranges per batch (each batch is one commit), 1–%d", writer.MaxRepairLimit))
	var name string
	if err := parse(fs, args, &name); err != nil {
		return err
	}
	switch {
	case name == "":
		return usagef("missing table name NS.NAME")
	case *batch <= 0 || *batch > writer.MaxRepairLimit:
		return usagef("--batch must be between 1 and %d, not %d", writer.MaxRepairLimit, *batch)
	}
	if _, _, err := splitTableName(name); err != nil {
		return err
	}
	c := adminURL.client()
	var sum writer.RepairResult
	var after *writer.Position
	total := -1
	for {
		res, err := c.RepairTable(ctx, name, writer.RepairOptions{Limit: *batch, After: after})
		if err != nil {
			return reachable(namedTable(name, err))
		}
		if total < 0 {
			total = res.Examined + res.Remaining
			sum.SchemaID = res.SchemaID
			if total == 0 {
				fmt.Fprintf(stdout, "nothing to repair: no dead letters of %s were built with a schema version older than %d, and no rows read null for a column it gives a default\n", name, res.SchemaID)
				return nil
			}
		}
		sum.Examined += res.Examined
		sum.Repaired += res.Repaired
		sum.Records += res.Records
		sum.DefaultRanges += res.DefaultRanges
		sum.DefaultRows += res.DefaultRows
		sum.DeadLetters += res.DeadLetters
		sum.Unrepairable += res.Unrepairable
		sum.UnrepairableRanges += res.UnrepairableRanges
		sum.Pending += res.Pending
		fmt.Fprintf(stdout, "ranges %d/%d, %d records repaired\n", sum.Examined, max(total, sum.Examined), sum.Records)
		if res.Next == nil {
			break
		}
		after = res.Next
	}
	printRepairSummary(stdout, name, &sum)
	return nil
}

// printRepairSummary prints the totals of a repair's batches.
func printRepairSummary(w io.Writer, name string, s *writer.RepairResult) {
	fmt.Fprintf(w, "repaired %d of %d ranges with schema version %d: %d records moved from %s~dlq to %s\n",
		s.Repaired, s.Examined, s.SchemaID, s.Records, name, name)
	if s.DefaultRanges > 0 {
		fmt.Fprintf(w, "defaults: %d of these ranges were encoded with a version lacking a column that version %d gives a default: their %d rows now read the defaults, not null\n",
			s.DefaultRanges, s.SchemaID, s.DefaultRows)
	}
	if s.DeadLetters > 0 {
		fmt.Fprintf(w, "%d dead letters still do not decode with schema version %d\n", s.DeadLetters, s.SchemaID)
	}
	if s.Unrepairable > 0 {
		fmt.Fprintf(w, "%d dead letters could not be repaired: Kafka no longer holds their records (%d ranges start below the log start offset)\n",
			s.Unrepairable, s.UnrepairableRanges)
	}
	if s.Pending > 0 {
		fmt.Fprintf(w, "%d ranges are pending (their table side is being committed): run mink table repair %s again shortly\n", s.Pending, name)
	}
}
