package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/clustertest"
)

// A JSON Schema topic whose values are a oneOf of objects, each closed by
// additionalProperties: false: the table has a struct with one field per
// branch and each row fills the branch its value validates against; a
// value that breaks the writer schema (a key no branch allows, a key the
// top level forbids) is a dead letter naming the place. Read back through
// the REST catalog with iceberg-go.
func TestJSONSchemaUnions(t *testing.T) {
	env := startEnv(t, 1)
	url := env.Nodes[0].URL()
	reg := registryClient(t, env)
	require.NoError(t, env.Kafka.CreateTopic("payments", 1, nil))
	id := register(t, reg, "payments-value", sr.TypeJSON, `{"type": "object", "required": ["id", "method"], "additionalProperties": false,
		"properties": {
			"id": {"type": "integer"},
			"method": {"oneOf": [{"$ref": "#/definitions/card"}, {"$ref": "#/definitions/transfer"}]}},
		"definitions": {
			"card": {"type": "object", "required": ["number"], "additionalProperties": false,
				"properties": {"number": {"type": "string"}, "holder": {"type": "string"}}},
			"transfer": {"type": "object", "required": ["iban"], "additionalProperties": false,
				"properties": {"iban": {"type": "string"}, "holder": {"type": "string"}}}}}`)
	require.NoError(t, devenv.CreateTable(context.Background(), url, map[string]any{"namespace": "test", "name": "payments", "topic": "payments",
		"value_format": "json-schema"}))
	produceValues(t, env, "payments", map[int32][][]byte{0: {
		framed(id, `{"id": 1, "method": {"holder": "Ada", "number": "4111"}}`),
		framed(id, `{"id": 2, "method": {"holder": "Bob", "iban": "DE89"}}`),
		framed(id, `{"id": 3, "method": {"holder": "Cy", "number": "4111", "iban": "DE89"}}`),
		framed(id, `{"id": 4, "method": {"iban": "FR76"}, "note": "late"}`),
	}})
	clustertest.WaitCaughtUp(t, url, "test.payments")

	rows := map[int64]any{}
	eachRow(t, clustertest.ScanAll(t, url, "test.payments"), func(row map[string]any) {
		rows[row["id"].(int64)] = row["method"]
	})
	require.Equal(t, map[int64]any{
		1: map[string]any{"card": map[string]any{"number": "4111", "holder": "Ada"}, "transfer": nil},
		2: map[string]any{"card": nil, "transfer": map[string]any{"iban": "DE89", "holder": "Bob"}},
	}, rows)
	require.Equal(t, map[pk]string{
		{0, 2}: fmt.Sprintf("value (schema id %d): field method: object validates against none of the oneOf's branches (card, transfer)", id),
		{0, 3}: fmt.Sprintf("value (schema id %d): the writer schema rejects it: at /: additional properties 'note' not allowed", id),
	}, deadLetterReasons(t, clustertest.ScanAll(t, url, "test.payments~dlq")))
}
