package schemas_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/internal/settings"
	"github.com/minkhq/mink/schemas"
)

// writeFile writes content to a file under a temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestRegistryConfigValidate(t *testing.T) {
	ca := writeFile(t, "ca.pem", string(testCAPEM(t)))
	notPEM := writeFile(t, "ca.txt", "not a certificate\n")
	keyOnly := writeFile(t, "key.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
	missing := filepath.Join(t.TempDir(), "absent.pem")

	for _, c := range []struct {
		name string
		cfg  schemas.RegistryConfig
		key  string // "" = valid
		msg  string
	}{
		{"empty: no registry", schemas.RegistryConfig{}, "", ""},
		{"http", schemas.RegistryConfig{URL: "http://registry:8081"}, "", ""},
		{"https with path", schemas.RegistryConfig{URL: "https://sr.example.com/api/registry/", CAFile: ca}, "", ""},
		{"ipv6", schemas.RegistryConfig{URL: "http://[::1]:8081"}, "", ""},
		{"basic auth", schemas.RegistryConfig{URL: "http://r:8081", Username: "u", Password: "p"}, "", ""},
		{"basic auth in the URL", schemas.RegistryConfig{URL: "http://u:p@r:8081"}, "", ""},
		{"token", schemas.RegistryConfig{URL: "https://r", Token: "tok"}, "", ""},

		{"no scheme", schemas.RegistryConfig{URL: "registry:8081"}, schemas.KeyURL,
			`schemas: schema_registry.url "registry:8081" is not http(s)://host[:port][/path]: the scheme must be http or https`},
		{"ftp", schemas.RegistryConfig{URL: "ftp://r"}, schemas.KeyURL, "the scheme must be http or https"},
		{"no host", schemas.RegistryConfig{URL: "http:///path"}, schemas.KeyURL, "no host"},
		{"query", schemas.RegistryConfig{URL: "http://r:8081/?x=1"}, schemas.KeyURL, "query or fragment"},
		{"fragment", schemas.RegistryConfig{URL: "http://r:8081/#x"}, schemas.KeyURL, "query or fragment"},
		{"port 0", schemas.RegistryConfig{URL: "http://r:0"}, schemas.KeyURL, "the port is not 1–65535"},
		{"port too big", schemas.RegistryConfig{URL: "http://r:99999"}, schemas.KeyURL, "the port is not 1–65535"},
		{"empty port", schemas.RegistryConfig{URL: "http://r:"}, schemas.KeyURL, "empty port"},
		{"password hidden", schemas.RegistryConfig{URL: "ftp://u:secret@r"}, schemas.KeyURL, `"ftp://u:xxxxx@r"`},
		{"not a URL", schemas.RegistryConfig{URL: "http://u:secret@r:x y"}, schemas.KeyURL, "schema_registry.url is not a URL"},

		{"user without password", schemas.RegistryConfig{URL: "http://r", Username: "u"}, schemas.KeyPassword,
			"schemas: schema_registry.password is required with a username"},
		{"password without user", schemas.RegistryConfig{URL: "http://r", Password: "p"}, schemas.KeyUsername,
			"schemas: schema_registry.username is required with a password"},
		{"URL user without password", schemas.RegistryConfig{URL: "http://u@r"}, schemas.KeyPassword, "is required with a username"},
		{"basic auth twice", schemas.RegistryConfig{URL: "http://u:p@r", Username: "v", Password: "q"}, schemas.KeyUsername,
			"carries user:password@ too"},
		{"basic and token", schemas.RegistryConfig{URL: "http://r", Username: "u", Password: "p", Token: "t"}, schemas.KeyToken,
			"schemas: schema_registry.token is set with basic auth: give one of them"},
		{"URL basic and token", schemas.RegistryConfig{URL: "http://u:p@r", Token: "t"}, schemas.KeyToken, "with basic auth"},

		{"CA with http", schemas.RegistryConfig{URL: "http://r", CAFile: ca}, schemas.KeyCAFile,
			"schemas: schema_registry.ca_file is set but schema_registry.url is http, not https"},
		{"CA missing", schemas.RegistryConfig{URL: "https://r", CAFile: missing}, schemas.KeyCAFile, "no such file or directory"},
		{"CA not PEM", schemas.RegistryConfig{URL: "https://r", CAFile: notPEM}, schemas.KeyCAFile, "holds no PEM block"},
		{"CA without certificate", schemas.RegistryConfig{URL: "https://r", CAFile: keyOnly}, schemas.KeyCAFile, "holds no PEM certificate"},

		{"user without URL", schemas.RegistryConfig{Username: "u"}, schemas.KeyUsername,
			"schemas: schema_registry.username is set but schema_registry.url is empty (no registry)"},
		{"token without URL", schemas.RegistryConfig{Token: "t"}, schemas.KeyToken, "is empty (no registry)"},
		{"CA without URL", schemas.RegistryConfig{CAFile: ca}, schemas.KeyCAFile, "is empty (no registry)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if c.key == "" {
				require.NoError(t, err)
				return
			}
			var se *settings.Error
			require.True(t, errors.As(err, &se), "%v", err)
			require.Equal(t, c.key, se.Key)
			require.ErrorContains(t, err, c.msg)
			require.NotContains(t, err.Error(), "secret", "a password never reaches a message")
		})
	}
}
