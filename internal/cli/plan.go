package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/minkhq/mink/schemas"
)

// printPlan prints a create's plan (docs/design.md §4.7): for each
// subject, the start version and what becomes of each version's records.
func printPlan(w io.Writer, p *schemas.Plan) {
	if p == nil {
		return
	}
	for _, rp := range []struct {
		role string
		p    *schemas.RolePlan
	}{{"key", p.Key}, {"value", p.Value}} {
		if rp.p == nil {
			continue
		}
		how := "given"
		if rp.p.Chosen {
			how = "chosen: its evolution lands the most retained records"
		}
		fmt.Fprintf(w, "%s subject %s: columns from version %d (%s)\n", rp.role, rp.p.Subject, rp.p.Start, how)
		for _, st := range rp.p.Steps {
			deleted := ""
			if st.Deleted {
				deleted = ", soft-deleted"
			}
			fate := fmt.Sprintf("dead letters: %s", st.Error)
			if st.SchemaID != nil {
				fate = fmt.Sprintf("table schema version %d", *st.SchemaID)
			}
			fmt.Fprintf(w, "  version %d (schema id %d%s): %s; %s\n", st.Version, st.RegistryID, deleted, fate, records(st.Records))
			if st.OtherMessages > 0 {
				fmt.Fprintf(w, "    and %s of another message than the table's: dead letters\n", records(st.OtherMessages))
			}
		}
		for _, id := range slices.Sorted(maps.Keys(rp.p.Others)) {
			fmt.Fprintf(w, "  schema id %d (no version of %s): decided when indexed, dead letters unless the subject has it by then; %s\n",
				id, rp.p.Subject, records(rp.p.Others[id]))
		}
		fmt.Fprintf(w, "  %s in the table, %d %s\n", records(rp.p.Landing)+plural(rp.p.Landing, " lands", " land"),
			rp.p.DeadLetters, plural(rp.p.DeadLetters, "is a dead letter", "are dead letters"))
	}
	if p.Count.Unframed > 0 || p.Count.Tombstones > 0 {
		fmt.Fprintf(w, "dead letters whatever the version: %d %s without a schema registry header, %d null %s\n",
			p.Count.Unframed, plural(p.Count.Unframed, "key or value", "keys or values"), p.Count.Tombstones, plural(p.Count.Tombstones, "value", "values"))
	}
	switch {
	case p.Count.Read == 0 && p.Count.Retained == 0:
		fmt.Fprintln(w, "record counts: none (no retained record will be indexed)")
	case p.Count.Exact:
		fmt.Fprintf(w, "record counts: exact (%d retained records read)\n", p.Count.Read)
	default:
		fmt.Fprintf(w, "record counts: estimated from %d records read of %d retained offsets\n", p.Count.Read, p.Count.Retained)
	}
}

// records is "1 record" or "n records".
func records(n int64) string {
	return fmt.Sprintf("%d %s", n, plural(n, "record", "records"))
}
