// Package outage is Mink's one contract for "a dependency cannot be reached
// now" (docs/design.md §3.4): PostgreSQL or Kafka refused the connection,
// reset it, or did not answer in time. Such a failure says nothing about the
// request, and the same request can succeed later or on another node.
//
// The packages that talk to a dependency wrap ErrUnavailable into its
// errors: kafka into every error that means the brokers could not be
// reached, pgstore.Unavailable into PostgreSQL's (the way pgstore.Fenced
// marks a fencing rejection). Everything between passes the error on. Each
// HTTP layer maps it to 503 with Retry-After in one place: the catalog
// (ServiceUnavailableException), the S3 API (SlowDown) and the admin API.
// Like iceberg-go's shared catalog errors, callers branch with
// errors.Is(err, outage.ErrUnavailable) whichever dependency failed.
package outage

import "errors"

// ErrUnavailable is wrapped by every error that means PostgreSQL or Kafka
// could not be reached or did not answer in time. A request failing with it
// answers 503 with Retry-After; a job retries.
var ErrUnavailable = errors.New("unavailable")

// Mark returns err marked as an outage: errors.Is(Mark(err),
// ErrUnavailable) holds, errors.Is and errors.As still find err's own
// chain, and the message is err's own (an answer that quotes it reads the
// same). Mark(nil) is nil; an error already marked is returned as it is.
func Mark(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	return marked{err}
}

// marked is an error marked by Mark.
type marked struct{ err error }

func (m marked) Error() string   { return m.err.Error() }
func (m marked) Unwrap() []error { return []error{m.err, ErrUnavailable} }
