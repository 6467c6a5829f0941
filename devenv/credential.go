package devenv

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// CredentialFile is where `mink dev` keeps, while it runs, the admin
// credential ("CLIENT_ID:SECRET") of its node listening on port on the
// loopback: <user cache dir>/mink/dev-<port>.credential (mode 0600). The
// `mink` CLI reads it when given no credential and its --admin URL is that
// node's (DevCredential).
func CredentialFile(port string) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "mink", "dev-"+port+".credential")
}

// DevCredential returns the credential `mink dev` wrote for the node at
// nodeURL, when nodeURL is on the loopback (127.0.0.1, ::1, localhost) and
// such a file exists.
func DevCredential(nodeURL string) (string, bool) {
	u, err := url.Parse(nodeURL)
	if err != nil || u.Port() == "" {
		return "", false
	}
	if h := u.Hostname(); h != "localhost" {
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			return "", false
		}
	}
	b, err := os.ReadFile(CredentialFile(u.Port()))
	if err != nil {
		return "", false
	}
	c := strings.TrimSpace(string(b))
	return c, c != ""
}

// writeCredentials writes credential to the CredentialFile of every node
// of env and returns the files written.
func writeCredentials(env *Env, credential string) (files []string, err error) {
	for _, n := range env.Nodes {
		u, err := url.Parse(n.URL())
		if err != nil {
			return files, err
		}
		f := CredentialFile(u.Port())
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			return files, fmt.Errorf("devenv: credential file: %w", err)
		}
		if err := os.WriteFile(f, []byte(credential+"\n"), 0o600); err != nil {
			return files, fmt.Errorf("devenv: credential file: %w", err)
		}
		files = append(files, f)
	}
	return files, nil
}
