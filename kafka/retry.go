package kafka

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// retryBackoff bounds the pause between two tries of retryPartitionErrors
// (doubling from its first value).
var retryBackoff = [2]time.Duration{25 * time.Millisecond, 500 * time.Millisecond}

// retryPartitionErrors runs list until it returns nil, an error that is
// not one of Kafka's retriable ones, or ctx ends, refreshing the client's
// metadata between tries. franz-go retries a request that failed, but not
// a partition of an answer that carries a retriable error code: a leader
// that moved (NOT_LEADER_OR_FOLLOWER), an election under way
// (LEADER_NOT_AVAILABLE), a new topic whose leaders have not reached
// every broker yet. Kafka's Java admin client retries those until its
// timeout (default.api.timeout.ms); so does Mink, within the request
// timeout, instead of answering 503 for what a broker fixes itself in
// milliseconds (found against a real broker: a table created just after
// its topic got NOT_LEADER_FOR_PARTITION). UNKNOWN_TOPIC_OR_PARTITION,
// retriable for Kafka, is returned at once: a topic that does not exist
// is the caller's answer (ErrUnknownTopic).
func (c *Client) retryPartitionErrors(ctx context.Context, list func() error) error {
	wait := retryBackoff[0]
	for {
		err := list()
		if err == nil || !kerr.IsRetriable(err) || errors.Is(err, kerr.UnknownTopicOrPartition) {
			return err
		}
		c.cl.ForceMetadataRefresh()
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, retryBackoff[1])
	}
}
