package netproxy

import (
	"net"
	"sync"
)

// Listener is a net.Listener that can be cut: Cut closes every connection
// it accepted and, until Restore, closes new ones as soon as they are
// accepted. Accept keeps returning only real connections (never an error
// for the cut), so the server behind it keeps listening through an outage.
type Listener struct {
	net.Listener
	cutState // conns holds the accepted connections (not their wrappers)
}

// WrapListener makes ln cuttable.
func WrapListener(ln net.Listener) *Listener {
	return &Listener{Listener: ln, cutState: newCutState()}
}

// Accept waits for the next connection that arrives while the listener is
// not cut.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.cut {
			l.mu.Unlock()
			reset(c)
			continue
		}
		l.conns[c] = struct{}{}
		l.mu.Unlock()
		return &conn{Conn: c, l: l}, nil
	}
}

// Cut closes every accepted connection and refuses new ones until Restore.
func (l *Listener) Cut() { l.setCut(true) }

// Restore accepts connections again.
func (l *Listener) Restore() { l.setCut(false) }

// Open returns the number of accepted connections still open.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

type conn struct {
	net.Conn
	l    *Listener
	once sync.Once
}

func (c *conn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c.Conn)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// Switch cuts every listener made by its Listen at once: pass s.Listen to
// kfake.ListenFn and s.Cut takes every broker off the network.
type Switch struct {
	mu  sync.Mutex
	cut bool
	ls  []*Listener
}

// Listen is a net.Listen whose listener s cuts and restores.
func (s *Switch) Listen(network, address string) (net.Listener, error) {
	ln, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	l := WrapListener(ln)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cut {
		l.Cut()
	}
	s.ls = append(s.ls, l)
	return l, nil
}

// Cut cuts every listener.
func (s *Switch) Cut() { s.setCut(true) }

// Restore restores every listener.
func (s *Switch) Restore() { s.setCut(false) }

func (s *Switch) setCut(cut bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cut = cut
	for _, l := range s.ls {
		l.setCut(cut)
	}
}
