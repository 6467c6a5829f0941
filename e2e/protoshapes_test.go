package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/bufbuild/protocompile"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/tables"
)

// shapesProto has what has no Iceberg struct: oneof arms that only mark a
// case, a KeepAlive {}, google.protobuf.Empty, a Struct, a recursive
// message; and a second top-level message, Other, that producers of the
// topic may pick by its message index.
const shapesProto = `syntax = "proto3"; package e2e;
import "google/protobuf/struct.proto"; import "google/protobuf/empty.proto";
message Event {
  int64 id = 1;
  oneof kind { Started started = 2; Stopped stopped = 3; }
  KeepAlive keep_alive = 4;
  google.protobuf.Struct attrs = 5;
  Node tree = 6;
  google.protobuf.Empty ping = 7;
}
message Started {}
message Stopped {}
message KeepAlive {}
message Node { string name = 1; repeated Node children = 2; }
message Other { int64 id = 1; string note = 2; }`

// Messages without fields, Struct and recursive messages are served, read
// back through iceberg-go: markers as booleans (the set oneof arm true),
// Struct and the recursive part as JSON text; a record of the schema's
// other message is a dead letter naming both messages. A topic of
// KeepAlive {} records is a table without value columns.
func TestProtobufShapes(t *testing.T) {
	env := startEnv(t, 1)
	ctx := context.Background()
	url := env.Nodes[0].URL()
	reg := registryClient(t, env)
	id := register(t, reg, "pshapes-value", sr.TypeProtobuf, shapesProto)
	comp := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{"shapes.proto": shapesProto})})}
	files, err := comp.Compile(ctx, "shapes.proto")
	require.NoError(t, err)
	encode := func(md protoreflect.MessageDescriptor, indexes []int, js string) []byte {
		msg := dynamicpb.NewMessage(md)
		require.NoError(t, protojson.Unmarshal([]byte(js), msg))
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
		require.NoError(t, err)
		return append(wire.AppendHeader(nil, id, indexes), b...)
	}
	event, other := files[0].Messages().ByName("Event"), files[0].Messages().ByName("Other")

	ops := &admin.Client{URL: url}
	require.NoError(t, env.Kafka.CreateTopic("pshapes", 1, nil))
	tbl, err := ops.CreateTable(ctx, map[string]any{"namespace": "test", "name": "pshapes", "topic": "pshapes", "value_format": "protobuf"})
	require.NoError(t, err)
	require.Equal(t, "e2e.Event", tbl.Properties[tables.PropMessage])
	_, err = ops.CreateTable(ctx, map[string]any{"namespace": "test", "name": "pnone", "topic": "pshapes", "value_format": "protobuf",
		"subject": "pshapes-value", "message": "e2e.Missing"})
	require.ErrorContains(t, err, "has no message e2e.Missing")
	_, err = ops.CreateTable(ctx, map[string]any{"namespace": "test", "name": "pkey", "topic": "pshapes", "value_format": "protobuf",
		"subject": "pshapes-value", "key_format": "protobuf", "key_subject": "pshapes-value", "key_message": "e2e.KeepAlive"})
	require.ErrorContains(t, err, "the key has no fields to decode into a key column: use key format raw")

	produceValues(t, env, "pshapes", map[int32][][]byte{0: {
		encode(event, []int{0}, `{"id": "1", "started": {}, "ping": {}, "attrs": {"b": [1, "x", null], "a": {"t": true}}}`),
		encode(event, []int{0}, `{"id": "2", "stopped": {}, "keepAlive": {},
			"tree": {"name": "root", "children": [{"name": "c", "children": [{"name": "gc"}]}, {}]}}`),
		encode(other, []int{5}, `{"id": "3", "note": "not an event"}`),
		encode(event, []int{0}, `{"id": "4"}`),
	}})
	clustertest.WaitCaughtUp(t, url, "test.pshapes")
	require.Equal(t, map[pk]string{
		{0, 2}: fmt.Sprintf("value: schema id %d: the message indexes [5] select message e2e.Other, but the table holds e2e.Event (one message type per table)", id),
	}, deadLetterReasons(t, clustertest.ScanAll(t, url, "test.pshapes~dlq")))

	// The plan of a table of Other over this topic counts by message: the
	// Other record lands, the three Events are dead letters.
	plan, err := ops.PlanTable(ctx, map[string]any{"namespace": "test", "name": "pother", "topic": "pshapes", "value_format": "protobuf",
		"subject": "pshapes-value", "message": "e2e.Other"})
	require.NoError(t, err)
	require.EqualValues(t, 1, plan.Plan.Value.Landing)
	require.EqualValues(t, 3, plan.Plan.Value.DeadLetters)
	require.EqualValues(t, 3, plan.Plan.Value.Steps[0].OtherMessages)

	got := typeRows(t, url, "test.pshapes")
	require.Len(t, got, 3)
	require.Equal(t, map[string]any{"id": int64(1), "started": true, "stopped": nil, "keep_alive": nil, "ping": true,
		"attrs": `{"a":{"t":true},"b":[1,"x",null]}`, "tree": nil}, got[1])
	require.Equal(t, map[string]any{"id": int64(2), "started": nil, "stopped": true, "keep_alive": true, "ping": nil, "attrs": nil,
		"tree": map[string]any{"name": "root", "children": []any{`{"name":"c","children":[{"name":"gc"}]}`, `{}`}}}, got[2])
	require.Equal(t, map[string]any{"id": int64(4), "started": nil, "stopped": nil, "keep_alive": nil, "ping": nil, "attrs": nil, "tree": nil}, got[4])

	// A topic of KeepAlive {} records: rows of _kafka only.
	require.NoError(t, env.Kafka.CreateTopic("pbeats", 1, nil))
	tbl, err = ops.CreateTable(ctx, map[string]any{"namespace": "test", "name": "pbeats", "topic": "pbeats", "value_format": "protobuf",
		"subject": "pshapes-value", "message": "e2e.KeepAlive"})
	require.NoError(t, err)
	require.Equal(t, "e2e.KeepAlive", tbl.Properties[tables.PropMessage])
	beat := files[0].Messages().ByName("KeepAlive")
	produceValues(t, env, "pbeats", map[int32][][]byte{0: {encode(beat, []int{3}, `{}`), encode(beat, []int{3}, `{}`), encode(event, []int{0}, `{"id": "5"}`)}})
	clustertest.WaitCaughtUp(t, url, "test.pbeats")
	beats := clustertest.ScanAll(t, url, "test.pbeats")
	require.EqualValues(t, 2, beats.NumRows())
	require.Equal(t, "_kafka", beats.Schema().Field(0).Name)
	require.Equal(t, 1, len(beats.Schema().Fields()))
	require.Equal(t, map[pk]string{
		{0, 2}: fmt.Sprintf("value: schema id %d: the message indexes [0] select message e2e.Event, but the table holds e2e.KeepAlive (one message type per table)", id),
	}, deadLetterReasons(t, clustertest.ScanAll(t, url, "test.pbeats~dlq")))
}
