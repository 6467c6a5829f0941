// Package avro: placeholder until the Avro decoder lands (removed at merge).
package avro

import (
	"errors"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/codec/wire"
)

var errStub = errors.New("avro: not built yet")

// Convert is a placeholder.
func Convert(s *wire.Schema) (iceberg.Type, error) { return nil, errStub }

// Decoder is a placeholder.
type Decoder struct{}

// NewDecoder is a placeholder.
func NewDecoder(s *wire.Schema, target iceberg.Type) (*Decoder, error) { return nil, errStub }

// Decode is a placeholder.
func (d *Decoder) Decode(payload []byte) error { return errStub }

// Append is a placeholder.
func (d *Decoder) Append(cols []array.Builder) {}
