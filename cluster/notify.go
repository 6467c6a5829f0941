package cluster

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

var sqlNotifyChannel = mustSQL("notify_channel.sql")

// listenRetry is the pause between attempts to LISTEN again after the
// listening connection failed (Postgres down): rounds go on meanwhile.
const listenRetry = 2 * time.Second

// listen keeps a connection of its own (outside the pool) LISTENing on
// the cluster's channel and pokes Run on every notification, until ctx
// is done. The database notifies when lease rows are inserted or deleted
// (a table created, dropped or grown) and when a node row is deleted (a
// clean stop): see migration 007. Each time LISTEN starts it pokes Run
// too, since what was notified before was not heard.
func (c *Cluster) listen(ctx context.Context) {
	failing := false
	for {
		listened, err := c.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if listened {
			failing = false
		}
		if !failing {
			c.log.Warn("cluster: not listening for round notices; rounds run every lease_ttl/3 meanwhile", "err", err)
			failing = true
		} else {
			c.log.Debug("cluster: listen failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(listenRetry):
		}
	}
}

// listenOnce connects, LISTENs and waits for notifications until the
// connection fails or ctx is done. listened reports whether LISTEN ran.
func (c *Cluster) listenOnce(ctx context.Context) (listened bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, c.interval)
	conn, err := pgx.ConnectConfig(cctx, c.pool.Config().ConnConfig.Copy())
	cancel()
	if err != nil {
		return false, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	cctx, cancel = context.WithTimeout(ctx, c.interval)
	var channel string
	err = conn.QueryRow(cctx, sqlNotifyChannel).Scan(&channel)
	if err == nil {
		_, err = conn.Exec(cctx, "LISTEN "+pgx.Identifier{channel}.Sanitize())
	}
	cancel()
	if err != nil {
		return false, err
	}
	c.log.Debug("cluster: listening for round notices", "channel", channel)
	c.poke()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		c.log.Debug("cluster: round notice", "payload", n.Payload)
		c.poke()
	}
}

// poke asks Run for a round as soon as the current one (if any) ends,
// without blocking; pokes coalesce.
func (c *Cluster) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}
