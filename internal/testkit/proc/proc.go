// Package proc runs `mink serve` processes for the tests of
// internal/clustertest and for the bench: a process whose output goes to a
// log file, its readiness, its exit, and the HTTP reads both make of a node
// (JSON answers, /metrics series). It reports errors instead of failing a
// test, so that the bench, which is no test, shares it.
package proc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/minkhq/mink/internal/pglocal"
)

// Process is a started process whose stdout and stderr go to a log file.
type Process struct {
	Cmd     *exec.Cmd
	LogPath string

	done     chan struct{}
	mu       sync.Mutex
	exitedAt time.Time
	waitErr  error
}

// Start starts bin with args, its output written to the file logPath
// (created), with env added to this process's environment. The kernel
// kills the process when this one ends, whatever way it ends
// (dieWithParent).
func Start(bin string, args []string, logPath string, env ...string) (*Process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p := &Process{Cmd: exec.Command(bin, args...), LogPath: logPath, done: make(chan struct{})}
	p.Cmd.Stdout, p.Cmd.Stderr = log, log
	p.Cmd.Env = append(os.Environ(), env...)
	dieWithParent(p.Cmd)
	if err := p.Cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		err := p.Cmd.Wait()
		p.mu.Lock()
		p.exitedAt, p.waitErr = time.Now(), err
		p.mu.Unlock()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Running reports whether the process has not exited (a stopped one,
// SIGSTOP, is running).
func (p *Process) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// ExitedAt is when the process was seen to exit (zero while running).
func (p *Process) ExitedAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitedAt
}

// WaitErr is the process's exit error (nil for status 0, or while running).
func (p *Process) WaitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waitErr
}

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.Cmd.Process.Signal(sig) }

// Stop sends SIGTERM (a clean stop) and waits up to timeout for the exit;
// past it the process is killed and the error says so. A process that has
// exited already is left as it is.
func (p *Process) Stop(timeout time.Duration) error {
	if !p.Running() {
		return nil
	}
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
		p.Kill()
		return fmt.Errorf("did not stop within %s of SIGTERM", timeout)
	}
}

// Kill sends SIGKILL (a crash: nothing is released) and waits for the
// exit.
func (p *Process) Kill() {
	if !p.Running() {
		return
	}
	_ = p.Cmd.Process.Kill()
	<-p.done
}

// Tail returns the last n lines of the log that keep accepts (every line
// when keep is nil).
func (p *Process) Tail(n int, keep func(line string) bool) []string {
	b, _ := os.ReadFile(p.LogPath)
	var lines []string
	for _, l := range strings.Split(string(bytes.TrimRight(b, "\n")), "\n") {
		if keep == nil || keep(l) {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// WaitReady polls url's /readyz every 50 ms until it answers 200, and
// returns an error when the process exits first, ctx ends, or timeout
// passes.
func (p *Process) WaitReady(ctx context.Context, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := GetJSON(ctx, url+"/readyz", nil)
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited before it was ready (%v)", p.WaitErr())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s: %w", timeout, err)
		}
	}
}

// GetJSON GETs url and decodes a JSON answer into out, or discards the
// body when out is nil. Any status but 200 is an error with the start of
// the body; one GET takes 5 s at most.
func GetJSON(ctx context.Context, url string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(msg))
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// Metrics reads the Prometheus text exposition at url (a node's /metrics)
// and returns the values of the given series (name with its labels, as
// written: `mink_x{table="a"}`), in their order; a series it lacks is 0.
func Metrics(ctx context.Context, url string, series ...string) ([]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	out := make([]float64, len(series))
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		for i, s := range series {
			if name == s {
				if f, err := strconv.ParseFloat(val, 64); err == nil {
					out[i] = f
				}
			}
		}
	}
	return out, sc.Err()
}

// FreePort returns a TCP port free on the loopback interface
// (pglocal.FreePort).
func FreePort() (int, error) { return pglocal.FreePort() }
