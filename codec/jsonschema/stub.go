// Package jsonschema: placeholder until JSON Schema conversion lands (removed at merge).
package jsonschema

import (
	"errors"

	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/codec/wire"
)

// Convert is a placeholder.
func Convert(s *wire.Schema) (iceberg.Type, error) { return nil, errors.New("jsonschema: not built yet") }
