package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// GroupOffsets returns, for each consumer group whose name match accepts
// and that has committed an offset on a partition of topic, its committed
// offsets there (the offset of the next record the group will consume,
// Kafka's OffsetFetch), by partition. A partition the group has not
// committed on is absent. Groups are listed with ListGroups on every
// broker, their offsets fetched with one OffsetFetch request per
// coordinator (kadm.FetchManyOffsets). A group deleted between the two
// is left out.
//
// Errors wrap outage.ErrUnavailable when a broker or a coordinator does
// not answer (never a partial answer: a group on a broker that failed
// would look gone).
func (c *Client) GroupOffsets(ctx context.Context, topic string, match func(group string) bool) (map[string]map[int32]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	listed, err := c.adm.ListGroups(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	var groups []string
	for _, g := range listed.Groups() {
		if match(g) {
			groups = append(groups, g)
		}
	}
	out := map[string]map[int32]int64{}
	if len(groups) == 0 {
		return out, nil
	}
	for g, r := range c.adm.FetchManyOffsets(ctx, groups...) {
		if errors.Is(r.Err, kerr.GroupIDNotFound) {
			continue
		}
		if r.Err != nil {
			return nil, unavailable(fmt.Errorf("offsets of group %s: %w", g, r.Err))
		}
		for p, o := range r.Fetched[topic] {
			if o.Err != nil {
				return nil, unavailable(fmt.Errorf("offset of group %s on %s partition %d: %w", g, topic, p, o.Err))
			}
			if o.At < 0 { // no committed offset
				continue
			}
			if out[g] == nil {
				out[g] = map[int32]int64{}
			}
			out[g][p] = o.At
		}
	}
	return out, nil
}
