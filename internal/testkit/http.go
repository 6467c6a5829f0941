package testkit

import (
	"io"
	"net/http"
	"testing"
)

// Send sends req with the default client and returns the response with
// its body read (and closed); a transport error fails t.
func Send(t testing.TB, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	return SendWith(t, http.DefaultClient, req)
}

// SendWith is Send with client (e.g. one trusting a test CA).
func SendWith(t testing.TB, client *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("testkit: %s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("testkit: %s %s: read body: %v", req.Method, req.URL, err)
	}
	return resp, body
}

// Get GETs url and returns the response with its body read.
func Get(t testing.TB, url string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return Send(t, req)
}
