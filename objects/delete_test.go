package objects_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/objects"
	"github.com/minkhq/mink/tables"
)

// A deleted table's files, cached or not, answer 404 NoSuchKey on every
// node once tables.LocationsTTL has passed since its delete, under every
// auth mode and for signed forwards too; the cached copies are dropped.
// A table created again with the name has a new location, which serves.
func TestDeletedTableNotServed(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	p := &principals{revoked: map[string]bool{}}
	b := newFakeBuilder()
	na := startNode(t, "a", pool, b, nil, nil)
	nb := startNode(t, "b", pool, b, nil, withAuth(p))

	tid := insertTable(t, pool, "demo", "gone")
	metaKey := "demo/gone/metadata/00001-x.metadata.json"
	insertMetadataFile(t, pool, tid, metaKey, []byte(`{"v":1}`))
	dk := "demo/gone/data/0/0-100-1.parquet"
	data := content(61, 10_000)
	b.add(dk, data)
	c := vendFor(t, "alice", time.Hour, "demo/gone/")

	read := func(key string) (int, []byte) {
		resp, body := do(t, http.MethodGet, na.ts.URL+"/mink/"+key, map[string]string{"Range": "bytes=-8"})
		return resp.StatusCode, body
	}
	signedRead := func(key string) error {
		_, err := getObject(ctx, s3Client(nb, c, authRegion), "mink", key)
		return err
	}
	for _, k := range []string{metaKey, dk} {
		st, _ := read(k)
		require.Equal(t, http.StatusPartialContent, st, k)
		require.NoError(t, signedRead(k), k)
	}
	na.s.Flush()
	nb.s.Flush()
	require.Equal(t, 1, na.s.Stats().Files)
	require.Equal(t, 1, nb.s.Stats().Files)

	registerNode(t, pool, "b") // a member: its forwards are served
	_, err := pool.Exec(ctx, `DELETE FROM tables WHERE id = $1`, tid)
	require.NoError(t, err)
	time.Sleep(tables.LocationsTTL)

	for _, k := range []string{metaKey, dk} {
		st, body := read(k)
		require.Equal(t, http.StatusNotFound, st, k)
		require.Equal(t, "NoSuchKey", parseS3Error(t, body).Code, k)
		var ae smithy.APIError
		require.True(t, errors.As(signedRead(k), &ae), k)
		require.Equal(t, "NoSuchKey", ae.ErrorCode(), k)
		// A read forwarded by a node of the cluster is refused too.
		resp, _ := do(t, http.MethodGet, na.ts.URL+"/mink/"+k, forwarded(t, http.MethodGet, na.ts.URL+"/mink/"+k, "b", "a"))
		require.Equal(t, http.StatusNotFound, resp.StatusCode, k)
	}
	require.Eventually(t, func() bool { return na.s.Stats().Files == 0 && nb.s.Stats().Files == 0 },
		5*time.Second, 50*time.Millisecond, "the cached copies are dropped")

	// The name again: a new location (table_locations), served.
	var again int64
	require.NoError(t, pool.QueryRow(ctx, `
		INSERT INTO tables (namespace, name, topic, value_format, schema_json, table_uuid, location, metadata_location)
		VALUES ('demo', 'gone', 'gone', 'json', '{}', gen_random_uuid(), 's3://mink/demo/gone-2', 's3://mink/demo/gone-2/metadata/0.json')
		RETURNING id`).Scan(&again))
	dk2 := "demo/gone-2/data/0/0-100-1.parquet"
	b.add(dk2, data)
	st, body := read(dk2)
	require.Equal(t, http.StatusPartialContent, st)
	require.Equal(t, data[len(data)-8:], body)
	st, _ = read(dk)
	require.Equal(t, http.StatusNotFound, st, "the old location stays gone")
}

// A node that has not read the live tables since its start (a table
// created a moment ago) serves the new table's files at once.
func TestNewTableServedAtOnce(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	b := newFakeBuilder()
	n := startNode(t, "a", pool, b, func() []cluster.Member { return nil }, func(*objects.Config) {})
	time.Sleep(100 * time.Millisecond) // the node's first read of the tables is done
	insertTable(t, pool, "demo", "fresh")
	dk := "demo/fresh/data/0/0-100-1.parquet"
	data := content(62, 100)
	b.add(dk, data)
	resp, body := do(t, http.MethodGet, n.ts.URL+"/mink/"+dk, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, data, body)
}
