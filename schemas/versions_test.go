package schemas_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/minkhq/mink/schemas"
)

// Every version of the subject, oldest first, with its references; a
// soft-deleted version too (records written with it may be retained),
// marked. A subject without versions is ErrNotFound.
func TestVersions(t *testing.T) {
	fake := srfake.New()
	defer fake.Close()
	v1, v2 := seedShop(t, fake)
	cl, err := sr.NewClient(sr.URLs(fake.URL()))
	require.NoError(t, err)
	err = cl.DeleteSchema(ctx(t), "orders-value", 1, sr.SoftDelete)
	require.NoError(t, err)
	r := newRegistry(t, schemas.RegistryConfig{URL: fake.URL()})

	vs, err := r.Versions(ctx(t), "orders-value")
	require.NoError(t, err)
	require.Len(t, vs, 2)
	require.Equal(t, []int{1, 2}, []int{vs[0].Version, vs[1].Version})
	require.Equal(t, []int{v1, v2}, []int{vs[0].Schema.ID, vs[1].Schema.ID})
	require.Equal(t, []bool{true, false}, []bool{vs[0].Deleted, vs[1].Deleted})
	require.Equal(t, orderAvroV1, vs[0].Schema.Text)
	require.Equal(t, addressAvro, vs[0].Schema.References[0].Schema.References[0].Schema.Text)

	_, err = r.Versions(ctx(t), "nobody-value")
	require.ErrorIs(t, err, schemas.ErrNotFound)
}
