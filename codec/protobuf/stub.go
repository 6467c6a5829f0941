// Package protobuf: placeholder until the Protobuf decoder lands (removed at merge).
package protobuf

import (
	"errors"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/codec/wire"
)

var errStub = errors.New("protobuf: not built yet")

// Convert is a placeholder.
func Convert(s *wire.Schema, indexes []int) (iceberg.Type, error) { return nil, errStub }

// Decoder is a placeholder.
type Decoder struct{}

// NewDecoder is a placeholder.
func NewDecoder(s *wire.Schema, indexes []int, target iceberg.Type) (*Decoder, error) {
	return nil, errStub
}

// Decode is a placeholder.
func (d *Decoder) Decode(payload []byte) error { return errStub }

// Append is a placeholder.
func (d *Decoder) Append(cols []array.Builder) {}

// Unknown is a placeholder.
func (d *Decoder) Unknown() int { return 0 }
