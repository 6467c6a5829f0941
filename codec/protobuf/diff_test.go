package protobuf_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// sameAsProtobufGo compares the row the decoder built (as arrow's JSON)
// with protobuf-go's parse of the same payload (as protojson), for an
// allProto message. It returns "" when they agree, else the first
// difference; ok is false when protojson cannot print the message (e.g. a
// Timestamp beyond year 9999), so there is nothing to compare.
func sameAsProtobufGo(row string, m *dynamicpb.Message) (diff string, ok bool) {
	m.Clear(m.Descriptor().Fields().ByName("any")) // protojson needs Any's type
	theirs, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		return "", false
	}
	a, b := decodeJSON(row), decodeJSON(string(theirs))
	for _, fd := range fieldsOf(m.Descriptor()) {
		k := string(fd.Name())
		if k == "any" {
			continue
		}
		x, y := norm(k, a[k], false), norm(k, b[k], true)
		if x != y {
			return fmt.Sprintf("field %s: decoder %s, protobuf-go %s", k, x, y), true
		}
	}
	return "", true
}

func fieldsOf(md protoreflect.MessageDescriptor) []protoreflect.FieldDescriptor {
	var out []protoreflect.FieldDescriptor
	for i := range md.Fields().Len() {
		out = append(out, md.Fields().Get(i))
	}
	return out
}

func decodeJSON(s string) map[string]any {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v map[string]any
	if err := d.Decode(&v); err != nil {
		panic(err)
	}
	return v
}

// norm prints v canonically: the decoder's and protojson's forms of one
// value print the same.
func norm(key string, v any, proto bool) string {
	switch key {
	case "ts", "times":
		return normAll(v, func(x any) string {
			t, err := time.Parse(time.RFC3339Nano, x.(string))
			if err != nil {
				return "bad time " + x.(string)
			}
			return fmt.Sprint(t.UnixMicro())
		})
	case "dur":
		if proto && v != nil {
			s := strings.TrimSuffix(v.(string), "s")
			r, ok := new(big.Rat).SetString(s)
			if !ok {
				return "bad duration " + s
			}
			r.Mul(r, big.NewRat(1_000_000, 1))
			return r.RatString()
		}
	case "counts", "by_id":
		return normMap(v, proto)
	}
	return normAll(v, nil)
}

func normAll(v any, leaf func(any) string) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = normAll(x, leaf)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		var buf bytes.Buffer
		buf.WriteString("{")
		for _, k := range sortedKeys(v) {
			if v[k] == nil {
				continue // protojson leaves unset fields with presence out
			}
			fmt.Fprintf(&buf, "%s:%s,", k, normAll(v[k], leaf))
		}
		return buf.String() + "}"
	}
	if leaf != nil {
		return leaf(v)
	}
	s := fmt.Sprint(v)
	if r, ok := new(big.Rat).SetString(s); ok {
		return r.RatString() // 2.5e-09 and 2.5e-9 alike
	}
	switch s {
	case "Infinity":
		return "+Inf"
	case "-Infinity":
		return "-Inf"
	}
	return s
}

// normMap prints a map: arrow's [{key, value}] and protojson's object.
func normMap(v any, proto bool) string {
	m := map[string]any{}
	if proto {
		if v != nil {
			m = v.(map[string]any)
		}
	} else if v != nil {
		for _, e := range v.([]any) {
			kv := e.(map[string]any)
			k := fmt.Sprint(kv["key"])
			if _, dup := m[k]; dup {
				return "duplicate key " + k
			}
			m[k] = kv["value"]
		}
	}
	return normAll(m, nil)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// TestSameAsProtobufGo checks the comparison FuzzDecode relies on: equal
// for TestDecodeAll's payload, a difference for a changed value.
func TestSameAsProtobufGo(t *testing.T) {
	s := schema(allProto)
	md := descriptor(t, s)
	p := payload(t, md, `{"i32": -1, "u64": "18446744073709551615", "fl": 0.1, "s": "x", "color": 5, "inner": {"id": "y"},
		"nums": [1, 2], "counts": {"a": "1", "b": "2"}, "by_id": {"3": {"id": "z"}}, "number": "4",
		"ts": "2024-01-02T03:04:05.1Z", "dur": "-1.000001s", "w_uint64": "5", "w_float": 0.3, "times": ["2000-01-01T00:00:00Z"]}`)
	got, err := rows(t, s, nil, nil, p)
	require.NoError(t, err)
	theirs := dynamicpb.NewMessage(md)
	require.NoError(t, proto.Unmarshal(p, theirs))
	diff, ok := sameAsProtobufGo(got[0], theirs)
	require.True(t, ok)
	require.Empty(t, diff)

	changed := strings.Replace(got[0], `"dur":-1000001`, `"dur":-1000000`, 1)
	require.NotEqual(t, got[0], changed)
	diff, _ = sameAsProtobufGo(changed, theirs)
	require.Equal(t, "field dur: decoder -1000000, protobuf-go -1000001", diff)
	changed = strings.Replace(got[0], `{"key":"b","value":2}`, `{"key":"b","value":3}`, 1)
	diff, _ = sameAsProtobufGo(changed, theirs)
	require.Contains(t, diff, "field counts:")
}
