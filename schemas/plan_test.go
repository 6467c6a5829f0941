package schemas_test

import (
	"fmt"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/schemas"
)

// Issue 26's topic: v1 has amount decimal(10,2), v2 changes its scale to
// 3, v3 is v1 with an optional note.
func paymentVersions() []schemas.SubjectVersion {
	amount := func(scale int, extra string) string {
		return fmt.Sprintf(`{"type":"record","name":"Payment","fields":[{"name":"id","type":"long"},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":%d}}%s]}`, scale, extra)
	}
	note := `,{"name":"note","type":["null","string"],"default":null}`
	return []schemas.SubjectVersion{
		{Version: 1, Schema: &wire.Schema{ID: 11, Type: wire.TypeAvro, Text: amount(2, "")}},
		{Version: 2, Schema: &wire.Schema{ID: 12, Type: wire.TypeAvro, Text: amount(3, "")}},
		{Version: 3, Schema: &wire.Schema{ID: 13, Type: wire.TypeAvro, Text: amount(2, note)}},
	}
}

func paymentPlan(t *testing.T, start int, counts map[int]int64) *schemas.Plan {
	t.Helper()
	p, err := schemas.PlanCreate(schemas.PlanInput{KeyFormat: codec.Raw, ValueFormat: codec.Avro,
		Value:  &schemas.PlanRole{Format: codec.Avro, Subject: "payments-value", Versions: paymentVersions(), Start: start},
		Counts: schemas.WriterCounts{Value: counts, Exact: true}})
	require.NoError(t, err)
	return p
}

func schemaIDs(rp *schemas.RolePlan) []any {
	out := []any{}
	for _, st := range rp.Steps {
		if st.SchemaID == nil {
			out = append(out, st.Error)
		} else {
			out = append(out, *st.SchemaID)
		}
	}
	return out
}

const scaleError = "value: schema id 12: field amount: table has decimal(10, 2), schema has decimal(10, 3); " + schemas.ReasonPromotion

// The default start is the version whose chain lands the most records:
// v1's and v3's, the scale change of v2 dead letters. v1 and v3 land
// whichever starts; the tie goes to the newer columns, v3's.
func TestPlanCreateDefaultLandsHistory(t *testing.T) {
	t.Parallel()
	p := paymentPlan(t, 0, map[int]int64{11: 7, 12: 3, 13: 5, 99: 2})
	v := p.Value
	require.Equal(t, 3, v.Start)
	require.True(t, v.Chosen)
	require.Equal(t, []any{0, scaleError, 0}, schemaIDs(v))
	require.Equal(t, []int64{7, 3, 5}, []int64{v.Steps[0].Records, v.Steps[1].Records, v.Steps[2].Records})
	require.Equal(t, int64(12), v.Landing)
	require.Equal(t, int64(3), v.DeadLetters)
	require.Equal(t, map[int]int64{99: 2}, v.Others)
	require.Equal(t, "decimal(10, 2)", fieldType(t, p.Initial, "amount"))
	require.Equal(t, "string", fieldType(t, p.Initial, "note"))
	require.Empty(t, p.Added)
}

// Started at v1 (given), the chain evolves forward: v3's note is a new
// schema version.
func TestPlanCreateEvolvesForward(t *testing.T) {
	t.Parallel()
	p := paymentPlan(t, 1, map[int]int64{11: 7, 12: 3, 13: 5})
	require.Equal(t, []any{0, scaleError, 1}, schemaIDs(p.Value))
	require.Len(t, p.Added, 1)
	require.Equal(t, 1, p.Newest().ID)
	require.Equal(t, "registry schema 13 (value)", p.Added[0].Reason)
	_, ok := p.Initial.FindFieldByName("note")
	require.False(t, ok)
	require.Equal(t, "string", fieldType(t, p.Newest(), "note"))
}

// A given version is taken as it is: --subject-version 2 makes the
// opposite choice, v1's and v3's records dead letters.
func TestPlanCreateGivenVersion(t *testing.T) {
	t.Parallel()
	p := paymentPlan(t, 2, map[int]int64{11: 7, 12: 3, 13: 5})
	v := p.Value
	require.Equal(t, 2, v.Start)
	require.False(t, v.Chosen)
	from2 := "value: schema id %d: field amount: table has decimal(10, 3), schema has decimal(10, 2); " + schemas.ReasonPromotion
	require.Equal(t, []any{fmt.Sprintf(from2, 11), 0, fmt.Sprintf(from2, 13)}, schemaIDs(v))
	require.Equal(t, int64(3), v.Landing)
	require.Equal(t, int64(12), v.DeadLetters)
	require.Equal(t, "decimal(10, 3)", fieldType(t, p.Initial, "amount"))
	require.Empty(t, p.Added)
}

// More records of v2 than of v1 and v3: the default starts at v2. Without
// records (a new topic) every start ties and the latest version wins, as
// before plans.
func TestPlanCreateWeighsRecords(t *testing.T) {
	t.Parallel()
	require.Equal(t, 2, paymentPlan(t, 0, map[int]int64{11: 1, 12: 9, 13: 1}).Value.Start)
	require.Equal(t, 3, paymentPlan(t, 0, nil).Value.Start)
}

// A string→int change: v1 {id, code string} and v2 {id, code int}.
func TestPlanCreateTypeChange(t *testing.T) {
	t.Parallel()
	rec := `{"type":"record","name":"R","fields":[{"name":"id","type":"long"},{"name":"code","type":"%s"}]}`
	vs := []schemas.SubjectVersion{
		{Version: 1, Schema: &wire.Schema{ID: 21, Type: wire.TypeAvro, Text: fmt.Sprintf(rec, "string")}},
		{Version: 2, Schema: &wire.Schema{ID: 22, Type: wire.TypeAvro, Text: fmt.Sprintf(rec, "int")}},
	}
	p, err := schemas.PlanCreate(schemas.PlanInput{KeyFormat: codec.Raw, ValueFormat: codec.Avro,
		Value:  &schemas.PlanRole{Format: codec.Avro, Subject: "r-value", Versions: vs},
		Counts: schemas.WriterCounts{Value: map[int]int64{21: 4, 22: 1}}})
	require.NoError(t, err)
	require.Equal(t, 1, p.Value.Start)
	require.Equal(t, []any{0, "value: schema id 22: field code: table has string, schema has int; " + schemas.ReasonPromotion},
		schemaIDs(p.Value))
}

// A version the subject lacks is a clear 400.
func TestPlanCreateMissingVersion(t *testing.T) {
	t.Parallel()
	_, err := schemas.PlanCreate(schemas.PlanInput{KeyFormat: codec.Raw, ValueFormat: codec.Avro,
		Value: &schemas.PlanRole{Format: codec.Avro, Subject: "payments-value", Versions: paymentVersions(), Start: 4}})
	require.EqualError(t, err, `invalid table definition: subject "payments-value" has no version 4 (versions 1 to 3)`)
}

func fieldType(t *testing.T, s *iceberg.Schema, name string) string {
	t.Helper()
	f, ok := s.FindFieldByName(name)
	require.True(t, ok, name)
	return f.Type.String()
}

// A key subject is planned as a value subject is, and its decisions touch
// only the key column: here the key's v2 (more records) wins and v1's
// records are dead letters, while the value's one version lands them all.
func TestPlanCreateKey(t *testing.T) {
	t.Parallel()
	key := `{"type":"record","name":"K","fields":[{"name":"id","type":"%s"}]}`
	keys := []schemas.SubjectVersion{
		{Version: 1, Schema: &wire.Schema{ID: 31, Type: wire.TypeAvro, Text: fmt.Sprintf(key, "string")}},
		{Version: 2, Schema: &wire.Schema{ID: 32, Type: wire.TypeAvro, Text: fmt.Sprintf(key, "int")}},
	}
	p, err := schemas.PlanCreate(schemas.PlanInput{KeyFormat: codec.Avro, ValueFormat: codec.Avro,
		Key:    &schemas.PlanRole{Format: codec.Avro, Subject: "k-key", Versions: keys},
		Value:  &schemas.PlanRole{Format: codec.Avro, Subject: "k-value", Versions: paymentVersions()[:1]},
		Counts: schemas.WriterCounts{Key: map[int]int64{31: 2, 32: 5}, Value: map[int]int64{11: 7}}})
	require.NoError(t, err)
	require.Equal(t, 2, p.Key.Start)
	require.True(t, p.Key.Chosen)
	require.Equal(t, []any{"key: schema id 31: field key.id: table has int, schema has string; " + schemas.ReasonPromotion, 0},
		schemaIDs(p.Key))
	require.Equal(t, []any{0}, schemaIDs(p.Value))
	require.Equal(t, int64(7), p.Value.Landing)
	require.Equal(t, "struct<12: id: required int>", fieldType(t, p.Initial, "key"))
}

// A Protobuf plan counts a version's records of the table's message
// only: the records of the schema's other messages are dead letters
// naming both, whichever the message chosen (they were counted as landing).
func TestPlanCreateProtobufMessages(t *testing.T) {
	t.Parallel()
	versions := []schemas.SubjectVersion{
		{Version: 1, Schema: &wire.Schema{ID: 41, Type: wire.TypeProtobuf,
			Text: "syntax = \"proto3\";\npackage q;\nmessage O { int64 id = 1; Mark m = 2; }\nmessage Mark {}\n"}},
		{Version: 2, Schema: &wire.Schema{ID: 42, Type: wire.TypeProtobuf,
			Text: "syntax = \"proto3\";\npackage q;\nmessage O { int64 id = 1; Mark m = 2; }\nmessage Mark { string why = 1; }\n"}},
	}
	counts := schemas.WriterCounts{Exact: true, Value: map[int]int64{41: 6, 42: 3},
		ValueMessages: map[int]map[string]int64{41: {"": 5, "1": 1}, 42: {"": 1, "1": 2}}}
	plan := func(message string) *schemas.RolePlan {
		t.Helper()
		p, err := schemas.PlanCreate(schemas.PlanInput{KeyFormat: codec.Raw, ValueFormat: codec.Protobuf,
			Value:  &schemas.PlanRole{Format: codec.Protobuf, Subject: "pq-value", Versions: versions, Message: message},
			Counts: counts})
		require.NoError(t, err)
		return p.Value
	}
	mark := plan("q.Mark")
	require.Equal(t, []int64{1, 2}, []int64{mark.Steps[0].Records, mark.Steps[1].Records})
	require.Equal(t, []int64{5, 1}, []int64{mark.Steps[0].OtherMessages, mark.Steps[1].OtherMessages})
	require.EqualValues(t, 3, mark.Landing)
	require.EqualValues(t, 6, mark.DeadLetters)

	// O's field m turns from a marker (boolean) into a struct in v2: the
	// default start v1 lands v1's 5 records of O; v2's O is a dead letter.
	o := plan("")
	require.Equal(t, 1, o.Start)
	require.Equal(t, []int64{5, 1}, []int64{o.Steps[0].Records, o.Steps[1].Records})
	require.Nil(t, o.Steps[1].SchemaID)
	require.EqualValues(t, 5, o.Landing)
	require.EqualValues(t, 1+1+2, o.DeadLetters)
}
