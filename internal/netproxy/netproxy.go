// Package netproxy cuts network paths in tests: a loopback TCP proxy (for
// PostgreSQL, or any server reached by one address) and a cuttable
// net.Listener (for servers that advertise their own address to clients,
// such as kfake: pass [Switch.Listen] to kfake.ListenFn).
//
// Cutting closes every open connection at once and, until Restore, accepts
// new connections only to close them (with a reset), so clients fail fast
// instead of hanging: the outage of a process that is down or whose host
// refuses, not of a silent network.
package netproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// DialTimeout bounds the proxy's connection to its target.
const DialTimeout = 5 * time.Second

// cutState is what a Proxy and a Listener keep under their lock: whether
// they are cut, and the connections open through them, which a cut resets.
type cutState struct {
	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

func newCutState() cutState { return cutState{conns: map[net.Conn]struct{}{}} }

// setCut sets whether s is cut; cutting resets every open connection.
func (s *cutState) setCut(cut bool) {
	s.mu.Lock()
	s.cut = cut
	var conns map[net.Conn]struct{}
	if cut {
		conns = s.takeConns()
	}
	s.mu.Unlock()
	resetAll(conns)
}

// takeConns returns the open connections and forgets them; the caller
// holds s.mu and resets them (resetAll) once it has let go of it.
func (s *cutState) takeConns() map[net.Conn]struct{} {
	conns := s.conns
	s.conns = map[net.Conn]struct{}{}
	return conns
}

// Proxy forwards TCP connections from a loopback address to a target.
type Proxy struct {
	target string
	ln     net.Listener

	cutState // conns holds both ends of every open pair
	closed   bool
	wg       sync.WaitGroup
}

// New starts a proxy on 127.0.0.1 (a free port) forwarding to target
// (HOST:PORT).
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, ln: ln, cutState: newCutState()}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr returns the proxy's address, HOST:PORT.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target returns the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// Cut closes every open connection and, until Restore, closes new ones as
// soon as they are accepted.
func (p *Proxy) Cut() { p.setCut(true) }

// Restore lets new connections through again.
func (p *Proxy) Restore() { p.setCut(false) }

// IsCut reports whether the proxy is cut.
func (p *Proxy) IsCut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	conns := p.takeConns()
	p.mu.Unlock()
	err := p.ln.Close()
	resetAll(conns)
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		if p.IsCut() {
			reset(c)
			continue
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// track registers c as open unless the proxy is cut or closed meanwhile.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut || p.closed {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	if !p.track(client) {
		reset(client)
		return
	}
	upstream, err := net.DialTimeout("tcp", p.target, DialTimeout)
	if err != nil {
		p.untrack(client)
		reset(client)
		return
	}
	if !p.track(upstream) {
		p.untrack(client)
		reset(client)
		reset(upstream)
		return
	}
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			p.untrack(client, upstream)
			client.Close()
			upstream.Close()
		})
	}
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(upstream, client)
		closeBoth()
		close(done)
	}()
	_, _ = io.Copy(client, upstream)
	closeBoth()
	<-done
}

// reset closes c with a TCP reset where it can, so the peer sees the
// connection fail at once rather than an orderly end of stream.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

func resetAll(conns map[net.Conn]struct{}) {
	for c := range conns {
		reset(c)
	}
}
