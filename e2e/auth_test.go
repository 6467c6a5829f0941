package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
)

// iceberg-go through the REST catalog with `credential` (OAuth2 client
// credentials through POST /v1/oauth/tokens), against two nodes under
// auth principals: a principal granted a.t1 sees and reads a.t1 only;
// a.t2 is absent from lists and missing on load, and t1's vended
// credentials read none of t2's files (header or presigned signature); a
// forged forwarding mark, another region, a revoked principal's token and
// credentials are refused.
func TestPrincipalsEndToEnd(t *testing.T) {
	ctx := context.Background()
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: 2, PostgresURL: pgtest.Schema(t), EphemeralPorts: true,
		LeaseTTL: 3 * time.Second, Principals: true})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	require.NotEmpty(t, env.Credential)
	url := env.Nodes[1].URL()

	const rows = 10
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...))
	require.NoError(t, err)
	defer cl.Close()
	for _, name := range []string{"t1", "t2"} {
		require.NoError(t, env.Kafka.CreateTopic(name, 1, nil))
		require.NoError(t, env.CreateTable(ctx, env.Nodes[0].URL(), map[string]any{
			"namespace": "a", "name": name, "topic": name, "value_format": "string"}))
		for i := range rows {
			rec := &kgo.Record{Topic: name, Value: fmt.Appendf(nil, "%s-%d", name, i)}
			require.NoError(t, cl.ProduceSync(ctx, rec).FirstErr())
		}
	}
	ops := &admin.Client{URL: url, Credential: env.Credential}
	for _, name := range []string{"a.t1", "a.t2"} {
		testkit.Eventually(t, 60*time.Second, 100*time.Millisecond, name+" committed", func() (bool, string) {
			p, err := ops.Partitions(ctx, name)
			if err != nil {
				return false, err.Error()
			}
			return len(p.Partitions) == 1 && p.Partitions[0].CommittedOffset == rows, fmt.Sprintf("%+v", p.Partitions)
		})
	}

	// No credential, a wrong secret: no catalog at all.
	_, err = rest.NewCatalog(ctx, "mink", url)
	require.Error(t, err)
	require.Contains(t, err.Error(), "NotAuthorizedException")
	reader, err := env.CreatePrincipal(ctx, "reader", false, "a.t1")
	require.NoError(t, err)
	_, err = rest.NewCatalog(ctx, "mink", url, rest.WithCredential(strings.Split(reader, ":")[0]+":wrong"))
	require.ErrorContains(t, err, "invalid_client")

	cat, err := rest.NewCatalog(ctx, "mink", url, rest.WithCredential(reader))
	require.NoError(t, err)
	var listed []string
	for id, err := range cat.ListTables(ctx, table.Identifier{"a"}) {
		require.NoError(t, err)
		listed = append(listed, strings.Join(id, "."))
	}
	require.Equal(t, []string{"a.t1"}, listed)
	nss, err := cat.ListNamespaces(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, []table.Identifier{{"a"}}, nss)
	_, err = cat.LoadTable(ctx, table.Identifier{"a", "t2"})
	require.ErrorIs(t, err, catalog.ErrNoSuchTable)
	exists, err := cat.CheckTableExists(ctx, table.Identifier{"a", "t2"})
	require.NoError(t, err)
	require.False(t, exists)
	exists, err = cat.CheckTableExists(ctx, table.Identifier{"a", "t1"})
	require.NoError(t, err)
	require.True(t, exists)

	tbl, err := cat.LoadTable(ctx, table.Identifier{"a", "t1"})
	require.NoError(t, err)
	at, err := tbl.Scan().ToArrowTable(ctx)
	require.NoError(t, err)
	require.EqualValues(t, rows, at.NumRows())
	at.Release()

	// t1's credentials, as a load vends them, on t2's files: its metadata
	// file and a data file (t2 planned by an admin), in the Authorization
	// header and presigned, and a forged forwarding mark.
	t1 := loadConfig(t, url, reader, "a", "t1")
	adminCat, err := rest.NewCatalog(ctx, "mink", url, rest.WithCredential(env.Credential))
	require.NoError(t, err)
	t2tbl, err := adminCat.LoadTable(ctx, table.Identifier{"a", "t2"})
	require.NoError(t, err)
	tasks, err := t2tbl.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, tasks)
	t2meta, t2data := tables.Key(t2tbl.MetadataLocation()), tables.Key(tasks[0].File.FilePath())
	t1meta := tables.Key(tbl.MetadataLocation())
	fs, err := iceio.LoadFS(ctx, t1, t2tbl.MetadataLocation())
	require.NoError(t, err)
	_, err = fs.Open(t2tbl.MetadataLocation())
	require.ErrorContains(t, err, "AccessDenied")
	s3c := s3.New(s3.Options{Region: t1["s3.region"], BaseEndpoint: aws.String(url), UsePathStyle: true, RetryMaxAttempts: 1,
		Credentials: staticCredentials(t1)})
	for _, key := range []string{t2meta, t2data} {
		_, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("mink"), Key: aws.String(key)})
		require.ErrorContains(t, err, "AccessDenied", key)
	}
	out, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("mink"), Key: aws.String(t1meta)})
	require.NoError(t, err)
	out.Body.Close()
	ps := s3.NewPresignClient(s3c)
	for key, want := range map[string]int{t1meta: http.StatusOK, t2meta: http.StatusForbidden, t2data: http.StatusForbidden} {
		req, err := ps.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("mink"), Key: aws.String(key)},
			s3.WithPresignExpires(time.Minute))
		require.NoError(t, err)
		rsp, err := http.Get(req.URL)
		require.NoError(t, err)
		rsp.Body.Close()
		require.Equal(t, want, rsp.StatusCode, "presigned %s", key)
	}
	forged, err := http.NewRequest(http.MethodGet, url+"/mink/"+t2meta, nil)
	require.NoError(t, err)
	forged.Header.Set(auth.ForwardedHeader, env.Nodes[0].ID())
	rsp, body := testkit.Send(t, forged)
	require.Equal(t, http.StatusForbidden, rsp.StatusCode, "%s", body)
	// Another region in the signature's scope.
	other := s3.New(s3.Options{Region: "eu-west-1", BaseEndpoint: aws.String(url), UsePathStyle: true, RetryMaxAttempts: 1,
		Credentials: staticCredentials(t1)})
	_, err = other.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("mink"), Key: aws.String(t1meta)})
	require.ErrorContains(t, err, "AuthorizationHeaderMalformed")

	_, err = env.Nodes[0].Auth().Store().Revoke(ctx, "reader")
	require.NoError(t, err)
	time.Sleep(auth.CacheTTL)
	_, err = cat.CheckTableExists(ctx, table.Identifier{"a", "t1"})
	require.Error(t, err, "a revoked principal's token")
	_, err = s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("mink"), Key: aws.String(t1meta)})
	require.ErrorContains(t, err, "AccessDenied", "a revoked principal's vended credentials")
}

// loadConfig loads table ns.name with a bearer token of credential and
// returns its config (the vended credentials with the S3 endpoint).
func loadConfig(t *testing.T, url, credential, ns, name string) map[string]string {
	t.Helper()
	ctx := context.Background()
	tok, err := (&auth.TokenSource{URL: url, Credential: credential}).Token(ctx)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/namespaces/"+ns+"/tables/"+name, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tok)
	rsp, body := testkit.Send(t, req)
	require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", body)
	var res struct {
		Config map[string]string `json:"config"`
	}
	require.NoError(t, json.Unmarshal(body, &res))
	return res.Config
}

// staticCredentials are the vended credentials of a load's config.
func staticCredentials(config map[string]string) aws.CredentialsProviderFunc {
	return func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: config["s3.access-key-id"], SecretAccessKey: config["s3.secret-access-key"],
			SessionToken: config["s3.session-token"]}, nil
	}
}
