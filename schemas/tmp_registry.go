package schemas

import "errors"

// ErrNotFound is a placeholder until registry.go lands (removed at merge).
var ErrNotFound = errors.New("not found in the schema registry")
