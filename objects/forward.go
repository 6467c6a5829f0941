package objects

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/cluster"
)

func newForwardTransport(cfg Config) *http.Transport {
	return &http.Transport{
		// Nodes reach each other directly; an environment proxy is for
		// the node's outbound traffic, not the cluster's own.
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: cfg.ForwardConnectTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   cfg.ForwardConnectTimeout,
		ResponseHeaderTimeout: cfg.ForwardHeaderTimeout,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		// The owner's bytes are passed on as they are: no transparent gzip.
		DisableCompression: true,
		// Owners advertising https are verified against the cluster's CA.
		TLSClientConfig: cfg.PeerTLS.Clone(),
	}
}

// remoteOwner returns the owner of key (docs/design.md §3.5) when it is another
// node this node may forward to now.
func (s *Server) remoteOwner(key string) (cluster.Member, bool) {
	owner, ok := cluster.Owner(s.members(), key)
	if !ok || owner.ID == s.cfg.NodeID || owner.AdvertiseURL == "" || len(s.cfg.ForwardKey) == 0 {
		return cluster.Member{}, false
	}
	s.downMu.Lock()
	until, down := s.downUntil[owner.ID]
	if down && time.Now().After(until) {
		delete(s.downUntil, owner.ID)
		down = false
	}
	s.downMu.Unlock()
	if down {
		s.log.Debug("owner unreachable lately; building here", "key", key, "owner", owner.ID)
		return cluster.Member{}, false
	}
	return owner, true
}

// hopHeaders are the hop-by-hop headers (RFC 9110 §7.6.1) a forward drops.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func copyEndToEnd(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append([]string(nil), vs...)
	}
	for _, c := range src.Values("Connection") {
		for f := range strings.SplitSeq(c, ",") {
			dst.Del(strings.TrimSpace(f))
		}
	}
	for _, h := range hopHeaders {
		dst.Del(h)
	}
}

// forward sends the read to owner (same method, path, query and headers,
// Range and conditionals included) and streams the answer back, whatever
// its status: an owner that answers has the final word (a 503 or a
// checksum mismatch there would be the same here). It reports false when
// the owner did not answer in time or refused the forward's signature
// (403), so the caller builds the file itself.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, key string, owner cluster.Member) bool {
	log := s.log.With("key", key, "owner", owner.ID)
	target := strings.TrimSuffix(owner.AdvertiseURL, "/") + r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, target, nil)
	if err != nil {
		log.Warn("cannot forward to owner; building here", "err", err)
		return false
	}
	copyEndToEnd(req.Header, r.Header)
	// Signed, so the owner serves it without forwarding it on (and without
	// asking the reader's credentials again, which named this node).
	auth.SignForward(s.cfg.ForwardKey, req, s.cfg.NodeID, owner.ID)

	s.counters.forwards.Add(1)
	resp, err := s.client.Do(req)
	if err != nil {
		if r.Context().Err() != nil {
			return true // the client went away: there is no one to answer
		}
		s.counters.forwardFailures.Add(1)
		s.metrics.forwards.WithLabelValues(forwardFailed).Inc()
		// Only an owner that could not be connected to is skipped for a
		// while; a slow one (header timeout) is likely busy building.
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			s.downMu.Lock()
			s.downUntil[owner.ID] = time.Now().Add(s.cfg.ForwardBackoff)
			s.downMu.Unlock()
		}
		log.Warn("owner did not answer; building here", "err", err)
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden {
		// A forward that verifies is served without the reader's
		// credentials, so a 403 is the owner refusing the signature:
		// another node now at that address (the signature names the
		// owner's id) or clocks past auth.ForwardWindow apart. The reader
		// was checked here: build here.
		s.counters.forwardFailures.Add(1)
		s.metrics.forwards.WithLabelValues(forwardFailed).Inc()
		log.Warn("owner refused the forward's signature; building here", "status", resp.Status)
		return false
	}
	s.metrics.forwards.WithLabelValues(forwardAnswered).Inc()

	copyEndToEnd(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	cw := &serveWriter{ResponseWriter: w, s: s, r: r, key: key}
	n, err := io.Copy(cw, resp.Body)
	s.served(sourceForwarded, n)
	if err != nil && r.Context().Err() == nil {
		// The status is sent; the only honest way left to fail is to
		// break the connection, so the client cannot take a short body
		// for the whole file.
		log.Warn("owner's answer cut short", "err", err, "bytes", n)
		panic(http.ErrAbortHandler)
	}
	return true
}
