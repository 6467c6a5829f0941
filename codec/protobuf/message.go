package protobuf

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/minkhq/mink/codec/wire"
)

// MessageName returns the fully-qualified name (package.Outer.Inner) of
// the message of s that the Confluent message index path indexes selects
// ([0] or none: the file's first top-level message). A table holds the
// records of one message (docs/formats.md, "Protobuf"): a record whose
// indexes name another is a dead letter naming both.
//
// Errors: a schema that does not compile, an index out of range.
func MessageName(s *wire.Schema, indexes []int) (string, error) {
	md, err := message(s, indexes)
	if err != nil {
		return "", err
	}
	return string(md.FullName()), nil
}

// MessageIndexes returns the Confluent message index path of the message
// of s named name (fully qualified: package.Outer.Inner), the inverse of
// MessageName. Errors: a schema that does not compile, or no message of
// that name in s (the error lists the messages s has, up to 20).
func MessageIndexes(s *wire.Schema, name string) ([]int, error) {
	md, err := message(s, nil)
	if err != nil {
		return nil, err
	}
	var names []string
	var found []int
	var walk func(msgs protoreflect.MessageDescriptors, path []int) bool
	walk = func(msgs protoreflect.MessageDescriptors, path []int) bool {
		for i := range msgs.Len() {
			m := msgs.Get(i)
			if m.IsMapEntry() {
				continue
			}
			p := append(slices.Clip(path), i)
			if string(m.FullName()) == name {
				found = p
				return true
			}
			names = append(names, string(m.FullName()))
			if walk(m.Messages(), p) {
				return true
			}
		}
		return false
	}
	if walk(md.ParentFile().Messages(), nil) {
		return found, nil
	}
	if len(names) > 20 {
		names = append(names[:20], "…")
	}
	return nil, fmt.Errorf("protobuf: schema %d has no message %s (it has %v)", s.ID, name, names)
}
