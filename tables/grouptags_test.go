package tables_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/tables"
)

// TestParseGroupTags: names and path.Match patterns, blanks trimmed; an
// empty entry or a malformed pattern is ErrInvalid naming it.
func TestParseGroupTags(t *testing.T) {
	ps, err := tables.ParseGroupTags(" billing, etl-*,a?c,[x-z]1")
	require.NoError(t, err)
	require.Equal(t, []string{"billing", "etl-*", "a?c", "[x-z]1"}, ps)
	for _, g := range []string{"billing", "etl-", "etl-nightly", "abc", "y1"} {
		require.True(t, tables.MatchGroup(ps, g), g)
	}
	for _, g := range []string{"billing2", "etl", "ac", "a1"} {
		require.False(t, tables.MatchGroup(ps, g), g)
	}
	for v, msg := range map[string]string{"": "empty group name", "a,": "empty group name", "a,[b": `"[b" is not a valid pattern`, `x\`: `"x\\" is not a valid pattern`} {
		_, err := tables.ParseGroupTags(v)
		require.ErrorIs(t, err, tables.ErrInvalid, v)
		require.ErrorContains(t, err, msg, v)
	}
	tb := &tables.Table{Properties: map[string]string{tables.PropGroupTags: "billing"}}
	require.Equal(t, []string{"billing"}, tb.GroupTags())
	require.Nil(t, (&tables.Table{}).GroupTags())
}

// TestChangeable: the whitelist of properties a change may touch.
func TestChangeable(t *testing.T) {
	for _, k := range []string{"mink.group-tags", "write.target-file-size-bytes", "history.expire.max-snapshot-age-ms",
		"mink.history.max-snapshots", "commit.manifest.min-count-to-merge", "commit.manifest-merge.enabled"} {
		require.True(t, tables.Changeable(k), k)
	}
	for _, k := range []string{"mink.json.field-matching", "mink.value-subject", "mink.json.infer", "format-version",
		"write.metadata.previous-versions-max", "anything"} {
		require.False(t, tables.Changeable(k), k)
	}
	tb := &tables.Table{ValueFormat: "string", Properties: map[string]string{"mink.group-tags": "a"}}
	out, err := tables.PropertyChange{Set: map[string]string{"mink.history.max-snapshots": "20"}, Remove: []string{"mink.group-tags"}}.Apply(tb)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"mink.history.max-snapshots": "20"}, out)
	require.Equal(t, "a", tb.Properties["mink.group-tags"], "Apply returns a copy")
	_, err = tables.PropertyChange{Set: map[string]string{"mink.history.max-snapshots": "-1"}}.Apply(tb)
	require.ErrorIs(t, err, tables.ErrInvalid)
}
