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

// TestGroupTagSlash: group ids are names, not paths: '*' and '?' match
// '/', a '/' in a pattern (literal, escaped, in a class or a range)
// matches a '/' of the id, and classes keep their meaning.
func TestGroupTagSlash(t *testing.T) {
	for _, c := range []struct {
		pattern string
		yes, no []string
	}{
		{"etl-*", []string{"etl-x/y", "etl-x/../y", "etl-/", "etl-"}, []string{"etl", "xetl-/"}},
		{"team/*", []string{"team/orders", "team/", "team/a/b"}, []string{"team", "teams/orders", "team-orders"}},
		{"*/orders", []string{"team/orders", "/orders", "a/b/orders"}, []string{"team-orders", "orders"}},
		{"team?orders", []string{"team/orders", "team-orders"}, []string{"teamorders", "team//orders"}},
		{`team\/orders`, []string{"team/orders"}, []string{"team-orders"}},
		{"team[/]orders", []string{"team/orders"}, []string{"team-orders"}},
		{"team[^/]orders", []string{"team-orders"}, []string{"team/orders"}},
		{"team[!-~]orders", []string{"team/orders", "team-orders"}, []string{"team\u00e9orders"}},
		{"team[^!-~]orders", []string{"team\u00e9orders"}, []string{"team/orders", "team-orders"}},
		{"team[+-/]orders", []string{"team/orders", "team-orders", "team.orders"}, []string{"team0orders", "teamaorders"}},
		{"team[/-9]orders", []string{"team/orders", "team5orders"}, []string{"team-orders", "teamaorders"}},
		{"team[^a-z]orders", []string{"team/orders", "team-orders"}, []string{"teamxorders"}},
		{"a*/*b", []string{"a/b", "ax/yb", "a/x/b"}, []string{"ab", "axb"}},
		{"*", []string{"x/y", "/", "", "x\x00y", "x\U0010FFFFy/"}, []string{"x/\x00y"}},
		// The stand-in for '/' is one byte: path.Match's '*' steps through
		// bytes, and a '?' after it could match part of a longer rune.
		{"a*??", []string{"a/b", "a//", "a/\u20ac/"}, []string{"a/", "a"}},
	} {
		ps, err := tables.ParseGroupTags(c.pattern)
		require.NoError(t, err, c.pattern)
		for _, g := range c.yes {
			require.True(t, tables.MatchGroup(ps, g), "%q should match %q", c.pattern, g)
		}
		for _, g := range c.no {
			require.False(t, tables.MatchGroup(ps, g), "%q should not match %q", c.pattern, g)
		}
	}
	for _, v := range []string{"team[/", "team[/-]x", `team\`, "a\x00b", "[]a", "[a-]b"} {
		_, err := tables.ParseGroupTags(v)
		require.ErrorIs(t, err, tables.ErrInvalid, v)
	}
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
