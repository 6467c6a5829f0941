// Package pglocal starts throwaway PostgreSQL clusters from the system's
// binaries, for `mink dev` and for tests (one cluster per test run).
package pglocal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Postgres is a throwaway PostgreSQL cluster in a temporary directory, run
// from the system's binaries. It listens on 127.0.0.1 only, trusts local
// connections and is deleted by Stop.
type Postgres struct {
	// URL connects as the cluster's superuser to database "postgres".
	URL string

	dir  string
	bin  string
	cred *syscall.Credential
	cmd  *exec.Cmd
}

// ErrNoPostgres is returned when no PostgreSQL server binaries are found.
// `make` installs them from Debian's packages (postgresql).
var ErrNoPostgres = errors.New("pglocal: no PostgreSQL server binaries (initdb, postgres) found; install Debian's postgresql package")

// FindPostgresBin returns the directory holding initdb and postgres: the
// one on PATH, else the newest /usr/lib/postgresql/<version>/bin.
func FindPostgresBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(matches, func(i, j int) bool { return versionOf(matches[i]) > versionOf(matches[j]) })
	for _, m := range matches {
		dir := filepath.Dir(m)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	return "", ErrNoPostgres
}

func versionOf(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

// TLS makes a throwaway cluster accept TLS connections only (ssl=on, and
// hostssl lines alone in pg_hba.conf), for tests of clients over TLS.
type TLS struct {
	// ServerCert and ServerKey are the server's certificate and key (PEM),
	// for 127.0.0.1.
	ServerCert, ServerKey string
	// CAFile is the CA that signed ServerCert: the URL's sslrootcert.
	CAFile string
	// ClientCert and ClientKey, when set, make the server require a client
	// certificate CAFile's CA signed, whose common name is the user
	// (clientcert=verify-full); the URL carries them (sslcert, sslkey).
	// The user of URL is then the certificate's common name.
	ClientCert, ClientKey string
}

// StartPostgres creates a cluster under a new temporary directory and starts
// it on a free loopback port. PostgreSQL refuses to run as root, so when the
// process is root the cluster runs as the `postgres` system user (created by
// Debian's package). The returned server is ready to accept connections.
func StartPostgres(ctx context.Context) (*Postgres, error) { return start(ctx, nil, "mink") }

// StartPostgresTLS is StartPostgres with a server that accepts TLS
// connections only, as tls says. Its URL has sslmode=verify-full and
// sslrootcert (and sslcert, sslkey): pgx verifies the server's certificate
// and name. user is the superuser's name (the client certificate's common
// name when tls has one).
func StartPostgresTLS(ctx context.Context, tls TLS, user string) (*Postgres, error) {
	return start(ctx, &tls, user)
}

func start(ctx context.Context, tls *TLS, superuser string) (*Postgres, error) {
	bin, err := FindPostgresBin()
	if err != nil {
		return nil, err
	}
	pg := &Postgres{bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("pglocal: running as root needs the postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		pg.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	pg.dir, err = os.MkdirTemp("", "mink-pg-")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			pg.Stop()
		}
	}()
	if pg.cred != nil {
		if err := os.Chown(pg.dir, int(pg.cred.Uid), int(pg.cred.Gid)); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(pg.dir, "data")
	initdb := pg.command(ctx, "initdb", "-D", data, "-U", superuser, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pglocal: initdb: %w: %s", err, out)
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	args := []string{"-D", data, "-p", strconv.Itoa(port), "-h", "127.0.0.1", "-k", pg.dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=400", "-c", "shared_buffers=128MB"}
	query := "sslmode=disable"
	if tls != nil {
		if args, err = pg.setupTLS(data, *tls, args); err != nil {
			return nil, err
		}
		query = "sslmode=verify-full&sslrootcert=" + url.QueryEscape(tls.CAFile)
		if tls.ClientCert != "" {
			query += "&sslcert=" + url.QueryEscape(tls.ClientCert) + "&sslkey=" + url.QueryEscape(tls.ClientKey)
		}
	}
	pg.cmd = pg.command(context.Background(), "postgres", args...)
	logf, err := os.Create(filepath.Join(pg.dir, "postgres.log"))
	if err != nil {
		return nil, err
	}
	pg.cmd.Stdout, pg.cmd.Stderr = logf, logf
	// Its own process group, so that a Ctrl-C in the terminal reaches Mink,
	// which then stops the server in order.
	pg.cmd.SysProcAttr.Setpgid = true
	if err := pg.cmd.Start(); err != nil {
		return nil, fmt.Errorf("pglocal: start postgres: %w", err)
	}
	pg.URL = fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?%s", url.PathEscape(superuser), port, query)
	if err := waitTCP(ctx, fmt.Sprintf("127.0.0.1:%d", port), 30*time.Second); err != nil {
		log, _ := os.ReadFile(filepath.Join(pg.dir, "postgres.log"))
		return nil, fmt.Errorf("pglocal: postgres did not start: %w: %s", err, log)
	}
	// Accepting TCP is not accepting queries; pg_isready-like wait.
	if err := waitReady(ctx, pg.URL, 30*time.Second); err != nil {
		return nil, err
	}
	ok = true
	return pg, nil
}

// setupTLS copies tls's files into the data directory, readable by the
// server only (PostgreSQL refuses a key others can read), writes a
// pg_hba.conf of hostssl lines only, and returns args with the ssl
// settings.
func (pg *Postgres) setupTLS(data string, tls TLS, args []string) ([]string, error) {
	files := []struct{ from, to string }{{tls.ServerCert, "server.crt"}, {tls.ServerKey, "server.key"}}
	hba := "local all all trust\n"
	opt := ""
	if tls.ClientCert != "" {
		files = append(files, struct{ from, to string }{tls.CAFile, "client-ca.crt"})
		args = append(args, "-c", "ssl_ca_file=client-ca.crt")
		opt = " clientcert=verify-full"
	}
	for _, f := range files {
		b, err := os.ReadFile(f.from)
		if err != nil {
			return nil, fmt.Errorf("pglocal: tls: %w", err)
		}
		if err := pg.writeOwned(filepath.Join(data, f.to), b); err != nil {
			return nil, err
		}
	}
	for _, host := range []string{"127.0.0.1/32", "::1/128"} {
		hba += "hostssl all all " + host + " trust" + opt + "\n"
	}
	if err := pg.writeOwned(filepath.Join(data, "pg_hba.conf"), []byte(hba)); err != nil {
		return nil, err
	}
	return append(args, "-c", "ssl=on", "-c", "ssl_cert_file=server.crt", "-c", "ssl_key_file=server.key"), nil
}

// writeOwned writes a file of the data directory, mode 0600, owned by the
// server's user.
func (pg *Postgres) writeOwned(path string, b []byte) error {
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	if pg.cred != nil {
		if err := os.Chown(path, int(pg.cred.Uid), int(pg.cred.Gid)); err != nil {
			return fmt.Errorf("pglocal: %w", err)
		}
	}
	return nil
}

func (pg *Postgres) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(pg.bin, name), args...)
	cmd.Dir = pg.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: pg.cred}
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd
}

// Stop shuts the server down (fast shutdown) and removes its directory.
func (pg *Postgres) Stop() {
	if pg.cmd != nil && pg.cmd.Process != nil {
		_ = pg.cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { _ = pg.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = pg.cmd.Process.Kill()
			<-done
		}
	}
	if pg.dir != "" && strings.HasPrefix(pg.dir, os.TempDir()) {
		_ = os.RemoveAll(pg.dir)
	}
}

// FreePort returns a TCP port free on the loopback interface (free when
// asked: a process started on it soon after nearly always gets it).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitTCP(ctx context.Context, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
