package e2e

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/schemas"
)

// paymentSchema is issue 26's topic: v1 has amount decimal(10,2), v2
// changes its scale to 3.
func paymentSchema(scale int) string {
	return fmt.Sprintf(`{"type":"record","name":"Payment","namespace":"e2e","fields":[{"name":"id","type":"long"},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":%d}}]}`, scale)
}

// TestSubjectVersions: a topic years old whose latest schema is not
// compatible with its history. The default create starts from the
// version whose evolution lands the most retained records (v1's six),
// says before it commits that v2's four are dead letters and why, and
// indexing then decides exactly so; --subject-version 2 makes the
// opposite choice.
func TestSubjectVersions(t *testing.T) {
	env := startEnv(t, 1)
	url := env.Nodes[0].URL()
	reg := registryClient(t, env)
	v1 := register(t, reg, "pay-value", sr.TypeAvro, paymentSchema(2))
	v2 := register(t, reg, "pay-value", sr.TypeAvro, paymentSchema(3))
	require.NoError(t, env.Kafka.CreateTopic("pay", 1, nil))
	var values [][]byte
	for i, v := range []struct{ id, scale, n int }{{v1, 2, 6}, {v2, 3, 4}} {
		s := avro.MustParse(paymentSchema(v.scale))
		for j := 0; j < v.n; j++ {
			id := int64(i*100 + j)
			unit := int64(math.Pow10(v.scale))
			b, err := avro.Marshal(s, map[string]any{"id": id, "amount": big.NewRat(id*unit+7, unit)})
			require.NoError(t, err)
			values = append(values, append(wire.AppendHeader(nil, v.id, nil), b...))
		}
	}
	produceValues(t, env, "pay", map[int32][][]byte{0: values})

	reason := fmt.Sprintf("value: schema id %d: field amount: table has decimal(10, 2), schema has decimal(10, 3); %s", v2, schemas.ReasonPromotion)
	reason2 := fmt.Sprintf("value: schema id %d: field amount: table has decimal(10, 3), schema has decimal(10, 2); %s", v1, schemas.ReasonPromotion)
	plan := mink(t, url, "table", "create", "pay.history", "--topic", "pay", "--value-format", "avro", "--dry-run")
	require.Equal(t, fmt.Sprintf(`value subject pay-value: columns from version 1 (chosen: its evolution lands the most retained records)
  version 1 (schema id %d): table schema version 0; 6 records
  version 2 (schema id %d): dead letters: %s; 4 records
  6 records land in the table, 4 are dead letters
record counts: exact (10 retained records read)
dry run: pay.history not created
`, v1, v2, reason), plan)
	plan2 := mink(t, url, "table", "create", "pay.latest", "--topic", "pay", "--value-format", "avro", "--subject-version", "2", "--dry-run")
	require.Contains(t, plan2, "value subject pay-value: columns from version 2 (given)\n")
	require.Contains(t, plan2, fmt.Sprintf("  version 1 (schema id %d): dead letters: %s; 6 records\n", v1, reason2))
	require.Contains(t, plan2, fmt.Sprintf("  version 2 (schema id %d): table schema version 0; 4 records\n", v2))

	out := mink(t, url, "table", "create", "pay.history", "--topic", "pay", "--value-format", "avro")
	require.Equal(t, strings.Replace(plan, "dry run: pay.history not created\n", "created pay.history on topic pay (dead letters: pay.history~dlq)\n", 1), out)
	mink(t, url, "table", "create", "pay.latest", "--topic", "pay", "--value-format", "avro", "--subject-version", "2")
	for _, c := range []struct {
		name   string
		landed []string
		dead   int
		why    string
	}{
		{"pay.history", []string{"0.07", "1.07", "2.07", "3.07", "4.07", "5.07"}, 4, reason},
		{"pay.latest", []string{"100.007", "101.007", "102.007", "103.007"}, 6, reason2},
	} {
		clustertest.WaitCaughtUp(t, url, c.name)
		var amounts []string
		eachRow(t, clustertest.ScanAll(t, url, c.name), func(row map[string]any) {
			amounts = append(amounts, row["amount"].(string))
		})
		require.ElementsMatch(t, c.landed, amounts, c.name)
		var whys []string
		eachRow(t, clustertest.ScanAll(t, url, c.name+"~dlq"), func(row map[string]any) {
			whys = append(whys, row["error"].(string))
		})
		require.Len(t, whys, c.dead, c.name)
		for _, w := range whys {
			require.Equal(t, c.why, w, c.name)
		}
	}
}
