package schemas

import (
	"fmt"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/protobuf"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/tables"
)

// otherMessage returns why a Protobuf writer schema ws, at message indexes,
// cannot fill table t's key (key set) or value: the indexes select a
// message other than the one the table holds (tables.PropMessage,
// PropKeyMessage; for a table created before them, the writer schema's
// first message). "" when it is the table's message, or the format is not
// Protobuf. A schema holds several messages and a producer picks one per
// record (Confluent, "Wire format", message indexes): rows of another
// message would fill the table's columns with values of other fields.
func otherMessage(t *tables.Table, key bool, format codec.Format, ws *wire.Schema, indexes []int) string {
	if format != codec.Protobuf {
		return ""
	}
	got, err := protobuf.MessageName(ws, indexes)
	if err != nil {
		return fmt.Sprintf("%s: schema id %d: %v", role(key), ws.ID, err)
	}
	want := t.Properties[tables.PropMessage]
	if key {
		want = t.Properties[tables.PropKeyMessage]
	}
	if want == "" {
		if want, err = protobuf.MessageName(ws, nil); err != nil {
			return fmt.Sprintf("%s: schema id %d: %v", role(key), ws.ID, err)
		}
	}
	if got == want {
		return ""
	}
	return fmt.Sprintf("%s: schema id %d: the message indexes %v select message %s, but the table holds %s (one message type per table)",
		role(key), ws.ID, indexesText(indexes), got, want)
}

// indexesText is indexes as written in the wire format's sense: [] is [0].
func indexesText(indexes []int) []int {
	if len(indexes) == 0 {
		return []int{0}
	}
	return indexes
}
