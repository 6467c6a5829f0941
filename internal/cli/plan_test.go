package cli

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/schemas"
)

// The plan says which counts are estimates, which versions are
// soft-deleted, what becomes of schema ids of no version, and the records
// that are dead letters whatever the version.
func TestPrintPlan(t *testing.T) {
	zero := 0
	var b bytes.Buffer
	printPlan(&b, &schemas.Plan{
		Value: &schemas.RolePlan{Subject: "pay-value", Start: 2, Steps: []schemas.PlanStep{
			{Version: 1, RegistryID: 7, Deleted: true, Error: "value: schema id 7: field amount: …", Records: 600},
			{Version: 2, RegistryID: 9, SchemaID: &zero, Records: 400, OtherMessages: 1},
		}, Landing: 400, DeadLetters: 601, Others: map[int]int64{3: 5}},
		Count: schemas.WriterCounts{Read: 20, Retained: 1000, Unframed: 3, Tombstones: 1},
	})
	require.Equal(t, `value subject pay-value: columns from version 2 (given)
  version 1 (schema id 7, soft-deleted): dead letters: value: schema id 7: field amount: …; 600 records
  version 2 (schema id 9): table schema version 0; 400 records
    and 1 record of another message than the table's: dead letters
  schema id 3 (no version of pay-value): decided when indexed, dead letters unless the subject has it by then; 5 records
  400 records land in the table, 601 are dead letters
dead letters whatever the version: 3 keys or values without a schema registry header, 1 null value
record counts: estimated from 20 records read of 1000 retained offsets
`, b.String())
}
