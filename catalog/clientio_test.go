package catalog_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/catalog"
)

// A table that holds properties configuring a reader's IO (stored before
// Mink refused them) is loaded without them: PyIceberg would merge
// s3.proxy-uri into its FileIO settings and send its reads, with the
// vended credentials, through that proxy. The rest of the metadata and
// the other properties are served.
func TestLoadLeavesOutClientSettings(t *testing.T) {
	t.Parallel()
	f := newFixture(t, catalog.Config{AccessKeyID: "ak", SecretAccessKey: "sk"})
	s := f.addTable("demo", "proxied")
	md := strings.Replace(string(s.metadata), `"properties":{`,
		`"properties":{"s3.proxy-uri":"http://proxy.example:3128","py-io-impl":"evil.FileIO","owner":"ops",`, 1)
	require.NotEqual(t, string(s.metadata), md)
	f.commit(s, "00001-x.metadata.json", []byte(md))

	for range 2 { // the second from the memo
		rsp, body := f.do("GET", "/v1/namespaces/demo/tables/proxied")
		require.Equal(t, http.StatusOK, rsp.StatusCode, "body: %s", body)
		res := decode[struct {
			Metadata struct {
				Properties map[string]string `json:"properties"`
				TableUUID  string            `json:"table-uuid"`
			} `json:"metadata"`
		}](t, body)
		require.Equal(t, map[string]string{"mink.topic": "proxied", "owner": "ops"}, res.Metadata.Properties)
		var want struct {
			TableUUID string `json:"table-uuid"`
		}
		require.NoError(t, json.Unmarshal(s.metadata, &want))
		require.Equal(t, want.TableUUID, res.Metadata.TableUUID)
	}
}
