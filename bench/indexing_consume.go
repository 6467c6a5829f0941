package main

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// idxConsume is the bare consume of topic: one franz-go consumer (default
// fetch settings, read_committed as the indexer reads) polls every
// partition from its start until it has seen records offsets, discarding
// them. It is the Kafka half of the composed limit (the bare encode the
// other half): the least a pipeline that reads the topic with franz-go
// spends, the in-process broker's CPU included as in indexing's figure.
func idxConsume(ctx context.Context, brokers []string, topic string, records int64) (idxWindow, error) {
	var w idxWindow
	w, err := idxMeasure(func() error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
		if err != nil {
			return err
		}
		defer cl.Close()
		rctx, cancel := context.WithTimeout(ctx, idxTimeout)
		defer cancel()
		var n int64
		for n < records {
			fs := cl.PollFetches(rctx)
			if err := fs.Err0(); err != nil {
				return fmt.Errorf("consume %s: %w", topic, err)
			}
			n += int64(fs.NumRecords())
		}
		return nil
	})
	return w, err
}

// idxComposed is the composed limit of a consume at rate consume and an
// encode at rate encode (per CPU second): the rate of doing one after the
// other on the same core, 1 / (1/consume + 1/encode).
func idxComposed(consume, encode float64) float64 {
	if consume <= 0 || encode <= 0 {
		return 0
	}
	return 1 / (1/consume + 1/encode)
}
