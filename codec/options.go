package codec

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Table properties that steer the JSON decoder. They are set when a table
// is created and never change, so a data file stays a pure function of
// (schema, properties, encoder version, records).
const (
	// PropFieldMatching says how JSON object keys match column and struct
	// field names: "exact" (default) or "case-insensitive".
	PropFieldMatching = "mink.json.field-matching"
	// PropUnknownFields says what becomes of a record with a JSON field that
	// matches no column: "ignore" (default: the field is counted and left
	// out of the row) or "dead-letter" (the record goes to <name>~dlq).
	PropUnknownFields = "mink.json.unknown-fields"
)

// FieldMatching is how JSON keys match field names.
type FieldMatching string

// Field matching modes (PropFieldMatching).
const (
	// MatchExact matches a key to the field of exactly that name.
	MatchExact FieldMatching = "exact"
	// MatchCaseInsensitive matches a key to the field whose name equals it
	// under Unicode simple case folding (as strings.EqualFold), e.g.
	// "vbeln" to VBELN. Two fields of one struct must then not fold to the
	// same name (the table is refused at create time), and two keys of one
	// object that match the same field make the record a dead letter.
	MatchCaseInsensitive FieldMatching = "case-insensitive"
)

// UnknownFields is what a JSON field that matches no column does.
type UnknownFields string

// Unknown-field policies (PropUnknownFields).
const (
	// UnknownIgnore leaves the field out of the row and counts it.
	UnknownIgnore UnknownFields = "ignore"
	// UnknownDeadLetter sends every record with an unknown field, at any
	// depth, to the dead-letter table, naming the fields.
	UnknownDeadLetter UnknownFields = "dead-letter"
)

// JSONOptions are the table properties of the JSON decoder. The zero value
// is the default: exact matching, unknown fields ignored and counted.
type JSONOptions struct {
	FieldMatching FieldMatching
	UnknownFields UnknownFields
}

// JSONOptionsOf reads the decoder options from table properties; absent
// properties take their defaults. Errors: a value that is not one of the
// property's values (the message names the property and its values).
func JSONOptionsOf(props map[string]string) (JSONOptions, error) {
	o := JSONOptions{FieldMatching: MatchExact, UnknownFields: UnknownIgnore}
	if err := propertyOneOf(props, PropFieldMatching, &o.FieldMatching, MatchExact, MatchCaseInsensitive); err != nil {
		return o, err
	}
	if err := propertyOneOf(props, PropUnknownFields, &o.UnknownFields, UnknownIgnore, UnknownDeadLetter); err != nil {
		return o, err
	}
	return o, nil
}

// propertyOneOf sets *dst to the property key of props when it is a or b,
// and leaves it when the property is absent. Errors: any other value.
func propertyOneOf[T ~string](props map[string]string, key string, dst *T, a, b T) error {
	v, ok := props[key]
	if !ok {
		return nil
	}
	if T(v) != a && T(v) != b {
		return fmt.Errorf("property %s must be %s or %s, not %q", key, a, b, v)
	}
	*dst = T(v)
	return nil
}

func (o JSONOptions) caseInsensitive() bool { return o.FieldMatching == MatchCaseInsensitive }

func (o JSONOptions) matching() FieldMatching {
	if o.FieldMatching == "" {
		return MatchExact
	}
	return o.FieldMatching
}

// foldName appends to dst the canonical form of name under Unicode simple
// case folding: each rune becomes the smallest rune of its folding orbit
// (unicode.SimpleFold), so two names are equal under strings.EqualFold
// exactly when their folded forms are equal. ASCII letters fold to upper
// case.
func foldName(dst, name []byte) []byte {
	for i := 0; i < len(name); {
		c := name[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(name[i:])
		i += size
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		dst = utf8.AppendRune(dst, m)
	}
	return dst
}
