package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LastStableOffsets returns the last stable offset of every partition of
// topic: the end of what read_committed consumers can read (one ListOffsets
// request with isolation read_committed). A table load compares it with
// the committed snapshot (docs/design.md §4.4).
func (c *Client) LastStableOffsets(ctx context.Context, topic string) (map[int32]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var offs kadm.ListedOffsets
	err := c.retryPartitionErrors(ctx, func() (err error) {
		offs, err = c.adm.ListCommittedOffsets(ctx, topic)
		if err == nil {
			err = offs.Error()
		}
		return err
	})
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
// §4.6). A topic is in starts only when every partition of it answered; a
// topic with a failed partition (no leader, not authorized) is in errs
// instead, so it holds up only itself. A topic Kafka does not know is in
// neither. err is set, and both maps nil, only when the request failed.
func (c *Client) LogStarts(ctx context.Context, topics []string) (starts map[string]map[int32]int64, errs map[string]error, err error) {
	starts, errs = map[string]map[int32]int64{}, map[string]error{}
	if len(topics) == 0 {
		return starts, errs, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	offs, err := c.adm.ListStartOffsets(ctx, topics...)
	if se, ok := errors.AsType[*kadm.ShardErrors](err); ok && !se.AllFailed {
		// Some brokers answered (a partition without a leader, a broker
		// down): the topics of the failed requests failed, not the rest.
		for _, e := range se.Errs {
			if req, ok := e.Req.(*kmsg.ListOffsetsRequest); ok {
				for _, rt := range req.Topics {
					errs[rt.Topic] = unavailable(e.Err)
				}
			}
		}
		err = nil
	}
	if err != nil {
		return nil, nil, unavailable(err)
	}
	offs.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			if !errors.Is(o.Err, kerr.UnknownTopicOrPartition) && errs[o.Topic] == nil {
				errs[o.Topic] = unavailable(o.Err)
			}
			return
		}
		if starts[o.Topic] == nil {
			starts[o.Topic] = map[int32]int64{}
		}
		starts[o.Topic][o.Partition] = o.Offset
	})
	for t := range errs {
		delete(starts, t)
	}
	return starts, errs, nil
}
