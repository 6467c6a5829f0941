package jsonschema_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec/jsonschema"
)

// TestValidatorReferences: the validator resolves $refs to the schema's
// references as Convert does (by name, and against the schema's $id),
// and compiles the branches of a union inside a reference.
func TestValidatorReferences(t *testing.T) {
	t.Parallel()
	v, err := jsonschema.NewValidator(js(`{"$id": "https://example.com/schemas/order.json", "type": "object", "properties": {
			"c": {"$ref": "customer.json"}, "p": {"$ref": "pay.json#/definitions/pay"}}, "additionalProperties": false}`,
		ref("https://example.com/schemas/customer.json", `{"type": "object", "properties": {"id": {"type": "integer"}}, "additionalProperties": false}`),
		ref("pay.json", `{"definitions": {"pay": {"oneOf": [{"title": "card", "type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]}, {"title": "cash", "type": "object", "properties": {"eur": {"type": "number"}}, "required": ["eur"]}]}}}`)))
	require.NoError(t, err)
	require.NoError(t, v.Validate([]byte(`{"c": {"id": 1}, "p": {"eur": 2.5}}`)))
	require.EqualError(t, v.Validate([]byte(`{"c": {"id": 1, "zip": "x"}}`)),
		"the writer schema rejects it: at /c: additional properties 'zip' not allowed")
	require.Len(t, v.Unions(), 1)
	u := v.Unions()[0]
	require.Equal(t, []string{"p"}, u.Path)
	require.Equal(t, "oneOf", u.Kind())
	got, err := u.Match([]byte(`{"eur": 2.5}`))
	require.NoError(t, err)
	require.Equal(t, []int{1}, got)
}

// TestValidatorReadsNothing: a $ref the schema's references do not hold
// is refused, also where Convert never looks (under "not"): the validator
// reads no file and no URL.
func TestValidatorReadsNothing(t *testing.T) {
	t.Parallel()
	for _, r := range []string{"file:///etc/hostname", "http://127.0.0.1:1/x.json"} {
		_, err := jsonschema.NewValidator(js(`{"type": "object", "properties": {"a": {"type": "string", "not": {"$ref": "` + r + `"}}}}`))
		require.ErrorContains(t, err, "no such schema reference")
		require.ErrorContains(t, err, r)
	}
}

// TestCached: one compile per schema text and references; another
// reference text is another validator.
func TestCached(t *testing.T) {
	t.Parallel()
	text := `{"type": "object", "properties": {"c": {"$ref": "c.json"}}}`
	a, err := jsonschema.Cached(js(text, ref("c.json", `{"type": "object", "properties": {"id": {"type": "integer"}}, "additionalProperties": false}`)))
	require.NoError(t, err)
	b, err := jsonschema.Cached(js(text, ref("c.json", `{"type": "object", "properties": {"id": {"type": "integer"}}, "additionalProperties": false}`)))
	require.NoError(t, err)
	require.Same(t, a, b)
	c, err := jsonschema.Cached(js(text, ref("c.json", `{"type": "object", "properties": {"id": {"type": "integer"}}}`)))
	require.NoError(t, err)
	require.NotSame(t, a, c)
	// Shared by the decoders of every partition at once (go test -race).
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = a.Validate([]byte(`{"c": {"id": 1, "x": 2}}`)) })
	}
	wg.Wait()
	for _, err := range errs {
		require.EqualError(t, err, "the writer schema rejects it: at /c: additional properties 'x' not allowed")
	}
	require.NoError(t, c.Validate([]byte(`{"c": {"id": 1, "x": 2}}`)))
}
