package tables_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/tables"
)

// Known Iceberg table properties Mink acts on must parse: a typo would
// otherwise silently mean the default.
func TestDefinitionProperties(t *testing.T) {
	def := func(props map[string]string) *tables.Definition {
		return &tables.Definition{Namespace: "t", Name: "x", Topic: "x", ValueFormat: "raw", Properties: props}
	}
	for _, props := range []map[string]string{
		{"history.expire.max-snapshot-age-ms": "abc"},
		{"history.expire.max-snapshot-age-ms": "-5"},
		{"history.expire.min-snapshots-to-keep": "1.5"},
		{"commit.manifest.min-count-to-merge": ""},
		{"commit.manifest.target-size-bytes": "8MiB"},
		{"commit.manifest-merge.enabled": "yes"},
		{"write.target-file-size-bytes": "0"},
		{"write.target-file-size-bytes": "-1"},
		{"write.target-file-size-bytes": "64MiB"},
		{"write.target-file-size-bytes": "+100"},
		{"write.target-file-size-bytes": "67108865"},
		{"write.target-file-size-bytes": "9223372036854775807"},
		{"mink.history.thinning": "1m:2s,10m:3s"},
		{"mink.history.thinning": "1m"},
		{"mink.group-tag": "billing"},     // misspelt: would do nothing
		{"mink.history.thining": "1m:1s"}, // misspelt
		{"mink.topic": "other"},           // Mink's own, from the definition
		{"mink.value-format": "json"},     // Mink's own
	} {
		_, _, err := tables.Schemas(def(props))
		require.ErrorIs(t, err, tables.ErrInvalid, "%v", props)
	}
	// Iceberg's reserved properties: the create of the metadata refused
	// them after a dry run had accepted them.
	for _, k := range []string{"format-version", "uuid", "snapshot-count", "current-snapshot-id", "default-sort-order", "current-snapshot-timestamp-ms"} {
		_, _, err := tables.Schemas(def(map[string]string{k: "1"}))
		require.ErrorContains(t, err, `property "`+k+`" is reserved`)
	}
	_, _, err := tables.Schemas(def(map[string]string{"mink.group-tag": "billing"}))
	require.ErrorContains(t, err, `unknown Mink property "mink.group-tag" (a table may set mink.group-tags, mink.history.thinning`)
	_, _, err = tables.Schemas(def(map[string]string{"history.expire.max-snapshot-age-ms": "5000",
		"history.expire.min-snapshots-to-keep": "3", "commit.manifest.min-count-to-merge": "100",
		"commit.manifest.target-size-bytes": "8388608", "commit.manifest-merge.enabled": "false", "write.target-file-size-bytes": "67108864", "owner": "anything",
		"mink.history.thinning": "1m:1s,1d:1h"}))
	require.NoError(t, err)
}

// The json decoder's properties must parse, apply to json tables only, and
// fit the schema: case-insensitive matching refuses column names that
// differ only by case.
func TestJSONProperties(t *testing.T) {
	schema := []byte(`{"type":"struct","fields":[{"id":1,"name":"VBELN","type":"string","required":false},{"id":2,"name":"AUFNR","type":"string","required":false}]}`)
	clash := []byte(`{"type":"struct","fields":[{"id":1,"name":"s","required":false,"type":{"type":"struct","fields":[
		{"id":2,"name":"Zip","type":"string","required":false},{"id":3,"name":"ZIP","type":"string","required":false}]}}]}`)
	def := func(format string, schema []byte, props map[string]string) *tables.Definition {
		return &tables.Definition{Namespace: "t", Name: "x", Topic: "x", ValueFormat: format, Schema: schema, Properties: props}
	}
	for _, c := range []struct {
		def *tables.Definition
		err string
	}{
		{def("json", schema, map[string]string{"mink.json.field-matching": "ignore-case"}),
			`invalid table definition: property mink.json.field-matching must be exact or case-insensitive, not "ignore-case"`},
		{def("json", schema, map[string]string{"mink.json.unknown-fields": "drop"}),
			`invalid table definition: property mink.json.unknown-fields must be ignore or dead-letter, not "drop"`},
		{def("raw", nil, map[string]string{"mink.json.field-matching": "exact"}),
			`invalid table definition: property mink.json.field-matching applies to value formats json and json-schema only`},
		{def("json", clash, map[string]string{"mink.json.field-matching": "case-insensitive"}),
			`invalid table definition: schema: field s.ZIP: its name and "Zip" differ only by case: with mink.json.field-matching = case-insensitive a JSON key would match both`},
	} {
		_, _, err := tables.Schemas(c.def)
		require.ErrorIs(t, err, tables.ErrInvalid)
		require.EqualError(t, err, c.err)
	}
	for _, d := range []*tables.Definition{
		def("json", clash, nil),
		def("json", schema, map[string]string{"mink.json.field-matching": "case-insensitive", "mink.json.unknown-fields": "dead-letter"}),
		def("json", schema, map[string]string{"mink.json.field-matching": "exact", "mink.json.unknown-fields": "ignore"}),
	} {
		_, _, err := tables.Schemas(d)
		require.NoError(t, err, "%v", d.Properties)
	}
}

// A registry format's definition (columns from the registry) checks out:
// its decoder compiles each writer schema only when records come.
func TestRegistryFormatDefinitions(t *testing.T) {
	value := []byte(`{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true}]}`)
	keyed := []byte(`{"type":"struct","fields":[{"id":1,"name":"key","required":false,"type":{"type":"struct","fields":[
		{"id":2,"name":"id","type":"string","required":true}]}},{"id":3,"name":"id","type":"long","required":true}]}`)
	for _, d := range []*tables.Definition{
		{Namespace: "t", Name: "x", Topic: "x", ValueFormat: "json-schema", Schema: value},
		{Namespace: "t", Name: "x", Topic: "x", ValueFormat: "avro", Schema: value},
		{Namespace: "t", Name: "x", Topic: "x", ValueFormat: "protobuf", KeyFormat: "string", Schema: value},
		{Namespace: "t", Name: "x", Topic: "x", ValueFormat: "avro", KeyFormat: "avro", Schema: keyed},
		{Namespace: "t", Name: "x", Topic: "x", ValueFormat: "json", KeyFormat: "json-schema", Schema: keyed},
	} {
		table, _, err := tables.Schemas(d)
		require.NoError(t, err, "%s/%s", d.KeyFormat, d.ValueFormat)
		require.Equal(t, "id", table.Fields()[len(table.Fields())-1].Name)
	}
}

// A declared schema too large for a manifest's Avro header is refused at
// create (codec.MaxSchemaJSON).
func TestSchemaTooLarge(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"struct","fields":[`)
	for i := range 50000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"k%d","type":"string","required":false}`, i+1, i)
	}
	b.WriteString(`]}`)
	_, _, err := tables.Schemas(&tables.Definition{Namespace: "a", Name: "b", Topic: "t", ValueFormat: "json",
		Schema: json.RawMessage(b.String())})
	require.ErrorIs(t, err, tables.ErrInvalid)
	require.ErrorIs(t, err, codec.ErrSchemaTooLarge)
}

// Text PostgreSQL cannot store (U+0000, invalid UTF-8) in a topic, a
// subject, a property or a schema's names and docs is an invalid
// definition, not a failure of the database at create (found by fuzzing:
// the admin API answered 500).
func TestDefinitionText(t *testing.T) {
	for _, def := range []tables.Definition{
		{Topic: "a\x00", ValueFormat: "raw"},
		{Topic: "a", ValueFormat: "raw", Properties: map[string]string{"owner": "\x00"}},
		{Topic: "a", ValueFormat: "raw", Properties: map[string]string{"own\x00er": "x"}},
		{Topic: "a", ValueFormat: "raw", Properties: map[string]string{"owner": "\xff"}},
		{Topic: "a", ValueFormat: "avro", Subject: "s\x00"},
		{Topic: "a", ValueFormat: "json", Schema: []byte(`{"type":"struct","fields":[{"id":1,"name":"a\u0000","type":"int","required":false}]}`)},
		{Topic: "a", ValueFormat: "json", Schema: []byte(`{"type":"struct","fields":[{"id":1,"name":"a","type":"int","required":false,"doc":"\u0000"}]}`)},
	} {
		def.Namespace, def.Name = "t", "x"
		_, _, err := tables.Schemas(&def)
		require.ErrorIs(t, err, tables.ErrInvalid, "%+v", def)
	}
}

// A change of mink.history.thinning is validated like one at create.
func TestThinningChange(t *testing.T) {
	tb := &tables.Table{ValueFormat: "raw"}
	out, err := tables.PropertyChange{Set: map[string]string{"mink.history.thinning": "0s:1s,1h:1m"}}.Apply(tb)
	require.NoError(t, err)
	require.Equal(t, "0s:1s,1h:1m", out["mink.history.thinning"])
	_, err = tables.PropertyChange{Set: map[string]string{"mink.history.thinning": "1m:2s,1h:3s"}}.Apply(tb)
	require.ErrorIs(t, err, tables.ErrInvalid)
	require.ErrorContains(t, err, "not a multiple of the previous step")
}

// A change may not set an unknown Mink property, even under a changeable
// prefix (it would do nothing); removing one is allowed.
func TestUnknownMinkPropertyChange(t *testing.T) {
	tb := &tables.Table{ValueFormat: "raw", Properties: map[string]string{"mink.history.foo": "1"}}
	_, err := tables.PropertyChange{Set: map[string]string{"mink.history.foo": "2"}}.Apply(tb)
	require.ErrorIs(t, err, tables.ErrInvalid)
	require.ErrorContains(t, err, `unknown Mink property "mink.history.foo"`)
	out, err := tables.PropertyChange{Remove: []string{"mink.history.foo"}}.Apply(tb)
	require.NoError(t, err)
	require.Empty(t, out)
}

// Properties that configure a reader's IO, endpoint, proxy, credentials or
// code to load are refused at create and at change, the key named:
// PyIceberg merges table properties into its FileIO settings.
func TestClientSettingProperties(t *testing.T) {
	t.Parallel()
	refused := []string{"s3.endpoint", "s3.proxy-uri", "S3.Proxy-URI", "s3.access-key-id", "py-io-impl", "io-impl",
		"gcs.oauth2.token", "adls.account-key", "hf.endpoint", "hdfs.host", "client.region", "http-client.proxy-endpoint",
		"rest.signing-region", "header.Authorization", "token", "token-refresh-enabled", "credential", "oauth2-server-uri",
		"uri", "warehouse", "downloaded-file.path", "write.data.path", "write.py-location-provider.impl",
		"write.location-provider.impl", "glue.endpoint", "oss.endpoint"}
	for _, k := range refused {
		_, _, err := tables.Schemas(&tables.Definition{Namespace: "t", Name: "x", Topic: "x", ValueFormat: "raw",
			Properties: map[string]string{k: "http://proxy.example:3128"}})
		require.ErrorIs(t, err, tables.ErrInvalid, k)
		require.ErrorContains(t, err, fmt.Sprintf("property %q configures a reader's storage access", k))
		tb := &tables.Table{ValueFormat: "raw"}
		_, err = tables.PropertyChange{Set: map[string]string{k: "x"}}.Apply(tb)
		require.ErrorContains(t, err, fmt.Sprintf("property %q configures a reader's storage access", k))
	}
	for _, k := range []string{"owner", "comment", "write.format.default", "read.split.target-size", "mink.group-tags"} {
		require.False(t, tables.ClientSetting(k), k)
	}
}

// A client setting stored before they were refused may be removed.
func TestClientSettingRemoved(t *testing.T) {
	t.Parallel()
	tb := &tables.Table{ValueFormat: "raw", Properties: map[string]string{"s3.proxy-uri": "http://p", "owner": "x"}}
	out, err := tables.PropertyChange{Remove: []string{"s3.proxy-uri"}}.Apply(tb)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"owner": "x"}, out)
}
