package outage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/outage"
)

func TestMark(t *testing.T) {
	require.NoError(t, outage.Mark(nil))

	cause := fmt.Errorf("dial tcp: %w", context.DeadlineExceeded)
	err := outage.Mark(cause)
	require.ErrorIs(t, err, outage.ErrUnavailable)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the cause's chain stays reachable")
	require.Equal(t, cause.Error(), err.Error(), "the message is the cause's")
	require.Equal(t, err, outage.Mark(err), "marking twice changes nothing")

	wrapped := fmt.Errorf("kafka: %w: %w", outage.ErrUnavailable, errors.New("no broker"))
	require.Equal(t, wrapped, outage.Mark(wrapped), "an error that wraps the sentinel is already marked")
	require.Equal(t, "kafka: unavailable: no broker", wrapped.Error())
}
