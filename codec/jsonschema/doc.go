// Package jsonschema converts a JSON Schema document, as the Confluent
// Schema Registry stores it (schema type JSON; drafts 04 to 2020-12), to
// the Iceberg type of a table's value columns (docs/formats-json-schema.md).
//
// Only the type mapping lives here: values are decoded by codec's JSON
// decoder into the converted (or evolved) table schema, which converts a
// JSON value only without loss and dead-letters the record otherwise.
//
// The document is walked as it is written: properties keep the document's
// order (encoding/json maps would lose it), and $ref resolves to JSON
// pointers in the same document ("#/definitions/X", "#/$defs/X"), to
// anchors, and to the registry's schema references (by name, which is the
// $ref URL). An anyOf/oneOf of two or more schemas other than null is a
// struct with a field per branch (Union); what has no exact Iceberg type is
// refused with the field path: type lists of two types, allOf of two,
// tuples, recursion, and schemas that accept any value.
//
// Validator checks a value against the whole writer schema (with
// santhosh-tekuri/jsonschema/v6), and a union's branches for the decoder.
package jsonschema
