package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/internal/flights"
)

// FlightsFile is the shared data set of 3 million flight records.
const FlightsFile = flights.File

// FlightsSchema is the Iceberg schema (spec JSON form) of a json table of
// the flight records as flights.JSON writes them.
const FlightsSchema = flights.Schema

// flightValues returns the JSON values of up to limit rows (0 = all) of
// FlightsFile (flights.JSON), or h.SkipNoData's error when it is absent.
func flightValues(h *H, limit int) ([][]byte, error) {
	path, ok := h.Data(FlightsFile)
	if !ok {
		return nil, h.SkipNoData(FlightsFile)
	}
	return flights.JSON(path, limit)
}

// produce writes values to topic round-robin over its partitions (value i
// to partition i mod partitions, no key) and waits for every
// acknowledgement. It returns the bytes produced (values only).
func produce(ctx context.Context, brokers []string, topic string, partitions int, values [][]byte) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.MaxBufferedRecords(1<<17), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var total int64
	errc := make(chan error, 1)
	for i, v := range values {
		total += int64(len(v))
		cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: int32(i % partitions), Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errc <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return 0, err
	}
	select {
	case err := <-errc:
		return 0, fmt.Errorf("produce: %w", err)
	default:
	}
	return total, nil
}
