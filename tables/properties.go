package tables

import (
	"context"
	_ "embed"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/table_properties_set.sql
var tablePropertiesSetSQL string

// PropGroupTags names the consumer groups whose committed offsets the
// table's refs follow as tags "group.<name>" (docs/design.md §4.8):
// comma-separated group names or glob patterns in path.Match syntax
// ("billing,etl-*"). Blanks around an entry are ignored; an empty entry or
// a malformed pattern is refused.
const PropGroupTags = "mink.group-tags"

// GroupTagPrefix starts the name of every consumer-group tag.
const GroupTagPrefix = "group."

// ParseGroupTags returns the patterns of a PropGroupTags value. Errors
// wrap ErrInvalid and name the entry: an empty one, or one path.Match
// rejects (an unclosed '[', a trailing '\').
func ParseGroupTags(v string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("%w: property %s: empty group name in %q (comma-separated names or path.Match patterns, e.g. billing,etl-*)",
				ErrInvalid, PropGroupTags, v)
		}
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("%w: property %s: %q is not a valid pattern (path.Match syntax: * ? [a-z] \\x): %w",
				ErrInvalid, PropGroupTags, p, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// GroupTags returns t's PropGroupTags patterns (validated when set), none
// when the property is absent.
func (t *Table) GroupTags() []string {
	v, ok := t.Properties[PropGroupTags]
	if !ok {
		return nil
	}
	ps, _ := ParseGroupTags(v)
	return ps
}

// MatchGroup reports whether consumer group g matches one of patterns.
func MatchGroup(patterns []string, g string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, g); ok {
			return true
		}
	}
	return false
}

// Changeable reports whether property k may be changed after create
// (docs/design.md §5): the consumer-group tags, history and snapshot
// expiry, manifest merging and the target file size. Others define the
// table's columns or decoding (formats, subjects, JSON matching) or are
// Iceberg's reserved ones.
func Changeable(k string) bool {
	switch {
	case k == PropGroupTags, k == PropTargetFileSize:
		return true
	case strings.HasPrefix(k, "history.expire."), strings.HasPrefix(k, "mink.history."),
		strings.HasPrefix(k, "commit.manifest.") || strings.HasPrefix(k, "commit.manifest-merge."):
		return true
	}
	return false
}

// PropertyChange is a change of a table's properties: keys set to values,
// keys removed.
type PropertyChange struct {
	Set    map[string]string `json:"set,omitempty"`
	Remove []string          `json:"remove,omitempty"`
}

// Apply returns props (a copy) changed by c, after checking c: every key
// Changeable, none both set and removed, values valid as at create
// (checkProperty, for a table of value format t's). Errors wrap ErrInvalid
// and name the key.
func (c PropertyChange) Apply(t *Table) (map[string]string, error) {
	if len(c.Set) == 0 && len(c.Remove) == 0 {
		return nil, fmt.Errorf("%w: nothing to change (set or remove a property)", ErrInvalid)
	}
	keys := slices.Sorted(maps.Keys(c.Set))
	for _, k := range append(keys, c.Remove...) {
		if !Changeable(k) {
			return nil, fmt.Errorf("%w: property %q cannot be changed after create (changeable: %s, %s, history.expire.*, mink.history.*, commit.manifest.*, commit.manifest-merge.*)",
				ErrInvalid, k, PropGroupTags, PropTargetFileSize)
		}
	}
	out := maps.Clone(t.Properties)
	if out == nil {
		out = map[string]string{}
	}
	for _, k := range keys {
		if slices.Contains(c.Remove, k) {
			return nil, fmt.Errorf("%w: property %q both set and removed", ErrInvalid, k)
		}
		if err := checkText(c.Set[k]); err != nil {
			return nil, err
		}
		if err := checkProperty(t.ValueFormat, k, c.Set[k]); err != nil {
			return nil, err
		}
		out[k] = c.Set[k]
	}
	for _, k := range c.Remove {
		delete(out, k)
	}
	return out, nil
}

// SetProperties stores props as table id's properties in tx, which holds
// the table's row lock.
func SetProperties(ctx context.Context, tx pgx.Tx, id int64, props map[string]string) error {
	_, err := tx.Exec(ctx, tablePropertiesSetSQL, id, props)
	return err
}
