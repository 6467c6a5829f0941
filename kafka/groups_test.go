package kafka_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/internal/testkit"
)

// TestGroupOffsets: the committed offsets of the matching groups on the
// topic, by partition; a partition without a commit is absent, and so is
// a group that committed only on another topic or does not match.
func TestGroupOffsets(t *testing.T) {
	ctx := context.Background()
	k := testkit.NewKafka(t, kfake.SeedTopics(3, "t", "u"))
	adm := kadm.NewClient(k.Producer(t))
	commit := func(group string, topic string, offs map[int32]int64) {
		t.Helper()
		os := kadm.Offsets{}
		for p, o := range offs {
			os.AddOffset(topic, p, o, -1)
		}
		resp, err := adm.CommitOffsets(ctx, group, os)
		require.NoError(t, err)
		require.NoError(t, resp.Error())
	}
	commit("billing", "t", map[int32]int64{0: 40, 2: 75})
	commit("etl-1", "t", map[int32]int64{1: 3})
	commit("etl-2", "u", map[int32]int64{0: 9})
	commit("other", "t", map[int32]int64{0: 1})

	got, err := k.Client.GroupOffsets(ctx, "t", func(g string) bool { return g == "billing" || strings.HasPrefix(g, "etl-") })
	require.NoError(t, err)
	require.Equal(t, map[string]map[int32]int64{"billing": {0: 40, 2: 75}, "etl-1": {1: 3}}, got)
}
