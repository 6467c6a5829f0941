package infer_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/infer"
)

// FuzzInfer: inference never panics, and what it infers from records is a
// schema a table can have (codec.TableSchema, codec.CheckSchema) whose
// JSON decoder takes every record it was inferred from: the package's
// promise that each value seen converts exactly. The one refusal allowed
// is an object none of whose keys is a column (keys left out: only empty
// objects, or U+0000), which the decoder dead-letters by design (§4.2).
// Records that are not UTF-8 are dead letters whatever the schema, and are
// left out.
func FuzzInfer(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":"x","c":[1.5,2],"d":{"e":true,"f":null}}`), []byte(`{"a":2,"c":[],"d":{"e":false,"g":[{"h":1}]}}`))
	f.Add([]byte(`{"n":1}`), []byte(`{"n":1.5}`))
	f.Add([]byte(`{"n":9007199254740993}`), []byte(`{"n":0.1}`))
	f.Add([]byte(`{"n":1e400}`), []byte(`{"n":-0}`))
	f.Add([]byte(`{"s":"x"}`), []byte(`{"s":1}`))
	f.Add([]byte(`{"s":true}`), []byte(`{"s":[1]}`))
	f.Add([]byte(`{"o":{}}`), []byte(`{"o":{"p":1},"q":[[[]]]}`))
	f.Add([]byte(`{"A":1}`), []byte(`{"a":"x"}`))
	f.Add([]byte(`{"a\u0000":1,"b":2}`), []byte(`{"\u0000":null}`))
	f.Add([]byte(`{"a":1,"a":2}`), []byte(`[1]`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var inf infer.Inferrer
		var added [][]byte
		for _, r := range [][]byte{a, b} {
			if inf.Add(r) == nil && utf8.Valid(r) {
				added = append(added, r)
			}
		}
		st, err := inf.Struct()
		if err != nil {
			return
		}
		declared := iceberg.NewSchema(0, st.FieldList...)
		sc, err := codec.TableSchema(codec.Raw, codec.JSON, declared)
		if err != nil {
			t.Fatalf("inferred %s: not a table schema: %v", st, err)
		}
		if err := codec.CheckSchema(sc); err != nil {
			t.Fatalf("inferred %s: %v", st, err)
		}
		dec, err := codec.NewDecoder(codec.JSON, sc, codec.JSONOptions{})
		if err != nil {
			t.Fatalf("inferred %s: no decoder: %v", st, err)
		}
		for _, r := range added {
			if err := dec.Decode(r); err != nil && !strings.Contains(err.Error(), "no key of the object matches") {
				t.Fatalf("inferred %s from %q, which it does not decode: %v", st, r, err)
			}
		}
	})
}
