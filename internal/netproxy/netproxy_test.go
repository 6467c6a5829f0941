package netproxy_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/internal/netproxy"
)

// echo serves line echo on ln until it is closed.
func echo(t *testing.T, ln net.Listener) {
	t.Helper()
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
}

// roundTrip sends a line on c and reads it back within a second.
func roundTrip(c net.Conn, line string) error {
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if got != line+"\n" {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// requireDead checks that c fails (it does not time out) within a second.
func requireDead(t *testing.T, c net.Conn) {
	t.Helper()
	start := time.Now()
	err := roundTrip(c, "x")
	require.Error(t, err)
	var ne net.Error
	if ok := asNetErr(err, &ne); ok {
		require.False(t, ne.Timeout(), "the connection hung instead of failing: %v", err)
	}
	require.Less(t, time.Since(start), 900*time.Millisecond)
}

func asNetErr(err error, ne *net.Error) bool {
	e, ok := err.(net.Error)
	if ok {
		*ne = e
	}
	return ok
}

// requireRefused checks that a new connection to addr fails at once: at
// connect, or at its first exchange.
func requireRefused(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return
	}
	defer c.Close()
	requireDead(t, c)
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestProxy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	echo(t, ln)

	p, err := netproxy.New(ln.Addr().String())
	require.NoError(t, err)
	defer p.Close()
	require.NotEqual(t, ln.Addr().String(), p.Addr())

	a := dial(t, p.Addr())
	require.NoError(t, roundTrip(a, "hello"))
	b := dial(t, p.Addr())
	require.NoError(t, roundTrip(b, "world"))

	p.Cut()
	require.True(t, p.IsCut())
	requireDead(t, a)
	requireDead(t, b)
	// New connections are accepted and dropped at once.
	for range 3 {
		requireRefused(t, p.Addr())
	}

	p.Restore()
	c := dial(t, p.Addr())
	require.NoError(t, roundTrip(c, "again"))
	require.NoError(t, roundTrip(c, "and again"))

	require.NoError(t, p.Close())
	requireDead(t, c)
	_, err = net.DialTimeout("tcp", p.Addr(), time.Second)
	require.Error(t, err, "a closed proxy refuses connections")
	require.NoError(t, p.Close(), "Close is idempotent")
}

func TestListener(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := netproxy.WrapListener(raw)
	echo(t, l)

	a := dial(t, l.Addr().String())
	require.NoError(t, roundTrip(a, "hello"))
	require.Eventually(t, func() bool { return l.Open() == 1 }, time.Second, 10*time.Millisecond)

	l.Cut()
	require.Equal(t, 0, l.Open())
	requireDead(t, a)
	for range 3 {
		requireRefused(t, l.Addr().String())
	}

	l.Restore()
	b := dial(t, l.Addr().String())
	require.NoError(t, roundTrip(b, "back"))
	b.Close()
	// The server's side closes when the echo loop sees EOF.
	require.Eventually(t, func() bool { return l.Open() == 0 }, time.Second, 10*time.Millisecond)
}

// TestSwitchKafka cuts an in-process Kafka (kfake advertises its own
// listen address, so it is cut at its listeners rather than proxied).
func TestSwitchKafka(t *testing.T) {
	var sw netproxy.Switch
	kc, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.ListenFn(sw.Listen), kfake.SeedTopics(1, "t"))
	require.NoError(t, err)
	defer kc.Close()

	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic("t"))
	require.NoError(t, err)
	defer cl.Close()
	ctx := context.Background()
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte("before")}).FirstErr())

	sw.Cut()
	// A record produced during the cut waits in the client's buffer.
	during := make(chan error, 1)
	cl.Produce(ctx, &kgo.Record{Value: []byte("during")}, func(_ *kgo.Record, err error) { during <- err })
	// No client reaches Kafka meanwhile.
	cl2, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	require.NoError(t, err)
	defer cl2.Close()
	for range 3 {
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		require.Error(t, cl2.Ping(cctx))
		cancel()
	}
	select {
	case err := <-during:
		t.Fatalf("a record was produced while Kafka is cut (err %v)", err)
	default:
	}

	sw.Restore()
	select {
	case err := <-during:
		require.NoError(t, err, "the buffered record is delivered after restore")
	case <-time.After(20 * time.Second):
		t.Fatal("the buffered record was not delivered after restore")
	}
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, cl.ProduceSync(rctx, &kgo.Record{Value: []byte("after")}).FirstErr())
	require.NoError(t, cl2.Ping(rctx))
}
