package node

import (
	"crypto/subtle"
	"net/http"
)

// bearer serves h only to requests with "Authorization: Bearer <token>"
// (compared in constant time); others get 401 with a Bearer challenge
// (RFC 6750 §3). An empty token serves everyone.
func bearer(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mink-metrics"`)
			http.Error(w, "401 Unauthorized: /metrics needs the metrics token (--metrics-token) as a bearer token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
