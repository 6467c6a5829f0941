package tables

import (
	"context"
	_ "embed"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/table_properties_set.sql
var tablePropertiesSetSQL string

// PropGroupTags names the consumer groups whose committed offsets the
// table's refs follow as tags "group.<name>" (docs/design.md §4.8):
// comma-separated group names or glob patterns ("billing,etl-*") in
// path.Match syntax except that '*' and '?' match '/' too: group ids are
// names, not paths ("etl-*" matches "etl-x/y"). Blanks around an entry are
// ignored; an empty entry or a malformed pattern is refused.
const PropGroupTags = "mink.group-tags"

// GroupTagPrefix starts the name of every consumer-group tag.
const GroupTagPrefix = "group."

// ParseGroupTags returns the patterns of a PropGroupTags value. Errors
// wrap ErrInvalid and name the entry: an empty one, or a malformed one
// (an unclosed '[', a trailing '\', U+0000).
func ParseGroupTags(v string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("%w: property %s: empty group name in %q (comma-separated names or glob patterns, e.g. billing,etl-*)",
				ErrInvalid, PropGroupTags, v)
		}
		if _, err := matchGroup(p, ""); err != nil {
			return nil, fmt.Errorf("%w: property %s: %q is not a valid pattern (* ? [a-z] [^a-z] \\x, where * and ? match any character, / too): %w",
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

// MatchGroup reports whether consumer group g matches one of patterns
// (PropGroupTags: '*' and '?' match any character, '/' included).
func MatchGroup(patterns []string, g string) bool {
	for _, p := range patterns {
		if ok, _ := matchGroup(p, g); ok {
			return true
		}
	}
	return false
}

// slashStandIn stands for '/' in the group ids and patterns matchGroup
// hands to path.Match, whose '*' and '?' stop at '/'. It is U+0000: one
// byte (path.Match's '*' steps through bytes, and a '?' there can match
// part of a longer rune), and never in a pattern (no property holds it),
// so no class range of a pattern reaches it either.
const slashStandIn = '\x00'

// matchGroup is path.Match(pattern, g) with '/' an ordinary character.
// For a g holding '/', '/' outside a class, escaped or not, becomes
// slashStandIn in both, and a class that holds '/' (alone or in a range)
// gets slashStandIn added, so "[^/]" and "[!-~]" keep their meaning; a g
// holding both '/' and U+0000 matches no pattern (its U+0000 would pass
// for a '/'). A g without '/' is path.Match's own case. The error is
// path.ErrBadPattern.
func matchGroup(pattern, g string) (bool, error) {
	if strings.ContainsRune(pattern, slashStandIn) {
		return false, fmt.Errorf("%w: U+0000 may not occur in a pattern", path.ErrBadPattern)
	}
	p, err := standInSlash(pattern)
	if err != nil {
		return false, err
	}
	switch {
	case !strings.Contains(g, "/"):
		return path.Match(pattern, g)
	case strings.ContainsRune(g, slashStandIn):
		return false, nil
	}
	return path.Match(p, strings.ReplaceAll(g, "/", string(slashStandIn)))
}

// standInSlash rewrites pattern for matchGroup: see there. It follows
// path.Match's grammar and returns path.ErrBadPattern where that would.
func standInSlash(pattern string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(pattern); {
		switch c := pattern[i]; c {
		case '\\':
			r, n := utf8.DecodeRuneInString(pattern[i+1:])
			if n == 0 {
				return "", path.ErrBadPattern
			}
			if r == '/' {
				b.WriteString(`\` + string(slashStandIn))
			} else {
				b.WriteString(pattern[i : i+1+n])
			}
			i += 1 + n
		case '/':
			b.WriteRune(slashStandIn)
			i++
		case '[':
			b.WriteByte('[')
			i++
			if i < len(pattern) && pattern[i] == '^' {
				b.WriteByte('^')
				i++
			}
			slash := false
			for n := 0; ; n++ {
				if i < len(pattern) && pattern[i] == ']' && n > 0 {
					i++
					break
				}
				start := i
				lo, next, err := classRune(pattern, i)
				if err != nil {
					return "", err
				}
				hi := lo
				if pattern[next] == '-' {
					if hi, next, err = classRune(pattern, next+1); err != nil {
						return "", err
					}
				}
				// The range stays as written ('/' in it is harmless: the
				// group id holds none); slashStandIn is added once.
				slash = slash || lo <= '/' && '/' <= hi
				b.WriteString(pattern[start:next])
				i = next
			}
			if slash {
				b.WriteRune(slashStandIn)
			}
			b.WriteByte(']')
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// classRune reads one rune of a class at pattern[i], escaped or not, as
// path.Match's getEsc does, and returns it with the index after it.
func classRune(pattern string, i int) (rune, int, error) {
	if i >= len(pattern) || pattern[i] == '-' || pattern[i] == ']' {
		return 0, 0, path.ErrBadPattern
	}
	if pattern[i] == '\\' {
		i++
	}
	r, n := utf8.DecodeRuneInString(pattern[i:])
	if n == 0 || r == utf8.RuneError && n == 1 || i+n >= len(pattern) {
		return 0, 0, path.ErrBadPattern
	}
	return r, i + n, nil
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
// Changeable (or a ClientSetting removed: one stored before such keys were
// refused), none set a ClientSetting, none both set and removed, values valid as at create
// (checkProperty, for a table of value format t's). Errors wrap ErrInvalid
// and name the key.
func (c PropertyChange) Apply(t *Table) (map[string]string, error) {
	if len(c.Set) == 0 && len(c.Remove) == 0 {
		return nil, fmt.Errorf("%w: nothing to change (set or remove a property)", ErrInvalid)
	}
	keys := slices.Sorted(maps.Keys(c.Set))
	for _, k := range append(keys, c.Remove...) {
		if ClientSetting(k) {
			if _, set := c.Set[k]; set {
				return nil, checkProperty(t.ValueFormat, k, c.Set[k])
			}
			continue // one stored before it was refused may go
		}
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
