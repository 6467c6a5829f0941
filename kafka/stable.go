package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
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

// LogStarts returns the log start offset of every partition of each of
// topics, by topic (one metadata and one ListOffsets request per broker for
// all of them): what a node's writers compare, once per expiry interval,
// to notice records deleted below the log start offset (docs/design.md
// §4.6). A topic Kafka does not know is left out.
func (c *Client) LogStarts(ctx context.Context, topics []string) (map[string]map[int32]int64, error) {
	out := map[string]map[int32]int64{}
	if len(topics) == 0 {
		return out, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	offs, err := c.adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, unavailable(err)
	}
	var first error
	offs.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			if !errors.Is(o.Err, kerr.UnknownTopicOrPartition) && first == nil {
				first = o.Err
			}
			return
		}
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]int64{}
		}
		out[o.Topic][o.Partition] = o.Offset
	})
	if first != nil {
		return nil, unavailable(first)
	}
	return out, nil
}
