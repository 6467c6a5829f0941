package kafka

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
)

// LastStableOffsets returns the last stable offset of every partition of
// topic: the end of what read_committed consumers can read (one ListOffsets
// request with isolation read_committed). A table load compares it with
// the committed snapshot (docs/design.md §4.4).
func (c *Client) LastStableOffsets(ctx context.Context, topic string) (map[int32]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	offs, err := c.adm.ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = offs.Error()
	}
	if err != nil {
		return nil, unavailable(err)
	}
	out := make(map[int32]int64)
	offs.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrUnknownTopic, topic)
	}
	return out, nil
}
