package commit

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/icebergmeta"
)

// Head.Parsed parses a head's metadata once per location and keeps the
// last parsedSlots locations.
func TestParsedCache(t *testing.T) {
	sc, err := codec.TableSchema(codec.Raw, codec.Raw, nil)
	require.NoError(t, err)
	loc, meta, err := icebergmeta.NewTable(sc, "s3://mink/t/p", uuid.New(), nil)
	require.NoError(t, err)
	h := &Head{MetadataLocation: loc, Metadata: meta}
	a, err := h.Parsed()
	require.NoError(t, err)
	b, err := h.Parsed()
	require.NoError(t, err)
	require.Same(t, a, b, "parsed once")

	for i := range parsedSlots {
		parsed.put(fmt.Sprintf("s3://mink/t/p/other-%d", i), a)
	}
	require.Nil(t, parsed.get(loc), "the oldest location went")
	require.Len(t, parsed.byLoc, parsedSlots)
	c, err := h.Parsed()
	require.NoError(t, err)
	require.NotSame(t, a, c, "parsed again")
	require.Equal(t, a.CurrentSchema().ID, c.CurrentSchema().ID)

	h.Metadata = []byte("{")
	h.MetadataLocation = "s3://mink/t/p/broken"
	_, err = h.Parsed()
	require.ErrorContains(t, err, "s3://mink/t/p/broken")
}
