// Package pglocal starts throwaway PostgreSQL clusters from the system's
// binaries, for `mink dev` and for tests (one cluster per test run).
package pglocal

import (
	"context"
	"errors"
	"fmt"
	"net"
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

// StartPostgres creates a cluster under a new temporary directory and starts
// it on a free loopback port. PostgreSQL refuses to run as root, so when the
// process is root the cluster runs as the `postgres` system user (created by
// Debian's package). The returned server is ready to accept connections.
func StartPostgres(ctx context.Context) (*Postgres, error) {
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
	initdb := pg.command(ctx, "initdb", "-D", data, "-U", "mink", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pglocal: initdb: %w: %s", err, out)
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	pg.cmd = pg.command(context.Background(), "postgres", "-D", data,
		"-p", strconv.Itoa(port), "-h", "127.0.0.1", "-k", pg.dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=400", "-c", "shared_buffers=128MB")
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
	pg.URL = fmt.Sprintf("postgres://mink@127.0.0.1:%d/postgres?sslmode=disable", port)
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
