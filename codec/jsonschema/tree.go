package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// node is a parsed JSON value whose objects keep their keys in document
// order, which encoding/json's maps would lose.
type node struct {
	kind  kind
	keys  []string // object keys, in order
	vals  []*node  // object values, parallel to keys
	elems []*node  // array elements
	str   string   // string value, or a number's literal
	b     bool
}

type kind uint8

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
)

func (k kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// get returns the value of key in an object, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kObject {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// maxDocumentDepth bounds the nesting of objects and arrays in a schema
// document, as codec's JSON decoder bounds a record's (1000): a deeper
// one is refused before it is walked.
const maxDocumentDepth = 1000

// parse reads one JSON document. Duplicate keys in an object are an error:
// which of the two a reader honours differs between libraries.
func parse(text string) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	n, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: data after the document")
	}
	return n, nil
}

// token reads the next token; the document's end is unexpected here.
func token(dec *json.Decoder) (json.Token, error) {
	tok, err := dec.Token()
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	return tok, nil
}

// parseValue parses the value depth objects and arrays deep.
func parseValue(dec *json.Decoder, depth int) (*node, error) {
	tok, err := token(dec)
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); ok && (d == '[' || d == '{') && depth == maxDocumentDepth {
		return nil, fmt.Errorf("invalid JSON: nested deeper than %d levels", maxDocumentDepth)
	}
	switch t := tok.(type) {
	case nil:
		return &node{kind: kNull}, nil
	case bool:
		return &node{kind: kBool, b: t}, nil
	case json.Number:
		return &node{kind: kNumber, str: string(t)}, nil
	case string:
		return &node{kind: kString, str: t}, nil
	case json.Delim:
		if t == '[' {
			n := &node{kind: kArray}
			for dec.More() {
				e, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, e)
			}
			if _, err := token(dec); err != nil { // ']'
				return nil, err
			}
			return n, nil
		}
		n := &node{kind: kObject}
		for dec.More() {
			tok, err := token(dec)
			if err != nil {
				return nil, err
			}
			key := tok.(string)
			if n.get(key) != nil {
				return nil, fmt.Errorf("invalid JSON: key %q appears twice in one object", key)
			}
			v, err := parseValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, key)
			n.vals = append(n.vals, v)
		}
		if _, err := token(dec); err != nil { // '}'
			return nil, err
		}
		return n, nil
	}
	return nil, fmt.Errorf("invalid JSON: unexpected token %v", tok)
}
