// Package wire holds what every Schema Registry format shares: the
// Confluent wire format of a record key or value (magic byte 0, a 4-byte
// big-endian schema id, for Protobuf the message indexes, then the
// payload) and a registry schema with its references resolved.
//
// Source of the format: Confluent Schema Registry, "Wire format"
// (docs.confluent.io/platform/current/schema-registry/fundamentals/serdes-develop/index.html#wire-format).
// The header itself is parsed by franz-go's sr.ConfluentHeader.
package wire

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/sr"
)

// Schema types, as the registry names them (sr.SchemaType's strings).
const (
	TypeAvro     = "AVRO"
	TypeProtobuf = "PROTOBUF"
	TypeJSON     = "JSON"
)

// Schema is one registry schema with its references resolved.
type Schema struct {
	// ID is the registry's id of the schema (0 for a schema not from a
	// registry, e.g. in a test).
	ID int `json:"id"`
	// Type is TypeAvro, TypeProtobuf or TypeJSON.
	Type string `json:"type"`
	// Text is the schema as the registry returns it: Avro JSON, a .proto
	// file, or a JSON Schema document.
	Text string `json:"text"`
	// References are the schemas this one names, resolved, in the
	// registry's order.
	References []Reference `json:"references,omitempty"`
}

// Reference is a schema another schema refers to (Confluent "schema
// references"). Name is what the referring schema calls it: an Avro
// named type's full name, a Protobuf import path ("other.proto"), or a
// JSON Schema $ref URL.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
	Schema  Schema `json:"schema"`
}

// ErrHeader is wrapped by Header and MessageIndexes errors: the bytes are
// not in the Confluent wire format. Records with such values are dead
// letters (docs/design.md §4.2).
var ErrHeader = errors.New("not in the Schema Registry wire format")

var confluent sr.ConfluentHeader

// Header splits a key or value in the Confluent wire format into its
// schema id and the rest (for Protobuf, the message indexes and the
// payload). Errors wrap ErrHeader: fewer than 5 bytes, or a first byte
// other than the magic byte 0.
func Header(b []byte) (id int, rest []byte, err error) {
	if b == nil {
		return 0, nil, fmt.Errorf("%w: null (tombstone)", ErrHeader)
	}
	if len(b) > 0 && b[0] != 0 {
		return 0, nil, fmt.Errorf("%w: first byte is 0x%02x, not the magic byte 0", ErrHeader, b[0])
	}
	id, rest, err = confluent.DecodeID(b)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %d bytes, shorter than the 5-byte header", ErrHeader, len(b))
	}
	return id, rest, nil
}

// MaxMessageIndexes bounds the message index path of a Protobuf value:
// deeper nesting than this in one .proto file is not credible and a
// corrupt count must not allocate without bound.
const MaxMessageIndexes = 32

// MessageIndexes splits the Protobuf message indexes off the rest of a
// value after Header: a zig-zag varint count followed by that many
// zig-zag varints, where a count of 0 means [0] (the first message of the
// file). Each index selects a message of the file, then a nested message
// of it, and so on. Errors wrap ErrHeader.
func MessageIndexes(rest []byte) (indexes []int, payload []byte, err error) {
	indexes, payload, err = confluent.DecodeIndex(rest, MaxMessageIndexes)
	if err != nil {
		// sr's own texts speak of the magic byte, which was fine here.
		return nil, nil, fmt.Errorf("%w: the Protobuf message indexes after the schema id are truncated, negative or more than %d",
			ErrHeader, MaxMessageIndexes)
	}
	for _, i := range indexes {
		if i < 0 {
			return nil, nil, fmt.Errorf("%w: negative message index %d", ErrHeader, i)
		}
	}
	return indexes, payload, nil
}

// AppendHeader appends the Confluent wire header of schema id (and, for
// Protobuf, message indexes) to b. Producers in tests and `mink dev` use
// it.
func AppendHeader(b []byte, id int, indexes []int) []byte {
	b, _ = confluent.AppendEncode(b, id, indexes) // never fails
	return b
}
