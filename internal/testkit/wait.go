package testkit

import (
	"testing"
	"time"
)

// Poll is how often WaitFor asks its condition, and WaitTimeout how long
// it asks before the test fails.
const (
	Poll        = 20 * time.Millisecond
	WaitTimeout = 20 * time.Second
)

// WaitFor polls cond every Poll until it holds, and fails t when it does
// not within WaitTimeout.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Eventually(t, WaitTimeout, Poll, what, func() (bool, string) { return cond(), "" })
}

// Eventually polls cond every interval until it reports true, and fails t
// with the last message cond gave when timeout passes first.
func Eventually(t testing.TB, timeout, interval time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if msg != "" {
				msg = ": " + msg
			}
			t.Fatalf("timed out after %s waiting for %s%s", timeout, what, msg)
		}
		time.Sleep(interval)
	}
}
