package settings

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type config struct {
	TTL    time.Duration `setting:"lease_ttl"`
	Size   int64         `setting:"range_size"`
	Count  int
	Name   string
	Logger *slog.Logger
}

func TestDefaults(t *testing.T) {
	def := config{TTL: time.Second, Size: 10, Count: 3, Name: "mink", Logger: slog.Default()}
	require.Equal(t, def, Defaults(config{}, def))
	set := config{TTL: time.Minute, Size: -1, Count: 1, Name: "x", Logger: slog.New(slog.DiscardHandler)}
	require.Equal(t, set, Defaults(set, def), "only zero fields take the default")
}

func TestNegative(t *testing.T) {
	require.NoError(t, Negative(config{}))
	require.NoError(t, Negative(config{Count: -1}), "untagged fields are not checked")
	err := fmt.Errorf("cluster: %w", Negative(config{TTL: -time.Second}))
	require.EqualError(t, err, "cluster: lease_ttl must be positive, not -1s")
	var se *Error
	require.True(t, errors.As(err, &se))
	require.Equal(t, "lease_ttl", se.Key)
	require.EqualError(t, Negative(config{Size: -2}), "range_size must be positive, not -2")

	require.NoError(t, Required("postgres", "postgres://x"))
	require.EqualError(t, Required("kafka", ""), "kafka is required")
	require.NoError(t, Check("x", nil, nil))
	require.EqualError(t, Check("x", nil, Required("kafka", ""), Required("postgres", "")), "x: kafka is required")
}
