package icebergmeta

import (
	"fmt"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
)

// smallManifests is the pure decision of mergeManifests: which manifests
// of a new list are merged, from the table's properties and their sizes.
func TestSmallManifests(t *testing.T) {
	list := func(lengths ...int64) []iceberg.ManifestFile {
		var ms []iceberg.ManifestFile
		for i, l := range lengths {
			b := iceberg.NewManifestFile(2, fmt.Sprintf("s3://mink/t/metadata/%d.avro", i), max(l, 1), 0, 1)
			if l < 0 { // a delete manifest
				b.Content(iceberg.ManifestContentDeletes)
			}
			ms = append(ms, b.Build())
		}
		return ms
	}
	props := iceberg.Properties{PropManifestMinCountToMerge: "4", PropManifestTargetSize: "100"}

	require.Equal(t, []int{1, 3}, smallManifests(props, list(10, 50, 500, 60)))
	require.Equal(t, []int{2, 4}, smallManifests(props, list(10, 500, 50, -1, 60, 500)), "a delete manifest is not merged")
	require.Nil(t, smallManifests(props, list(10, 50, 60)), "below the min count of data manifests")
	require.Nil(t, smallManifests(props, list(10, 50, -1, 60)), "a delete manifest does not count")
	require.Nil(t, smallManifests(props, list(10, 50, 500, 600)), "a single small manifest")
	off := iceberg.Properties{PropManifestMergeEnabled: "false", PropManifestMinCountToMerge: "4", PropManifestTargetSize: "100"}
	require.Nil(t, smallManifests(off, list(10, 50, 500, 60)))

	// Defaults: 16 data manifests, 8 MiB.
	lengths := make([]int64, DefaultManifestMinCountToMerge)
	for i := range lengths {
		lengths[i] = 1 << 20
	}
	require.Len(t, smallManifests(nil, list(lengths...)), DefaultManifestMinCountToMerge-1)
	require.Nil(t, smallManifests(nil, list(lengths[1:]...)))
}
