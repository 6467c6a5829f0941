package tables_test

import (
	"testing"

	"github.com/stretchr/testify/require"

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
	} {
		_, _, err := tables.Schemas(def(props))
		require.ErrorIs(t, err, tables.ErrInvalid, "%v", props)
	}
	_, _, err := tables.Schemas(def(map[string]string{"history.expire.max-snapshot-age-ms": "5000",
		"history.expire.min-snapshots-to-keep": "3", "commit.manifest.min-count-to-merge": "100",
		"commit.manifest.target-size-bytes": "8388608", "commit.manifest-merge.enabled": "false", "owner": "anything"}))
	require.NoError(t, err)
}
