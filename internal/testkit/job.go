package testkit

import (
	"context"
	"testing"
)

// Job is a job (an indexer's or a writer's Run) that a test runs in a
// goroutine of its own.
type Job struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// Start runs run in a goroutine with a context that Stop cancels. At
// cleanup the job is stopped and awaited, before the fixture's Kafka and
// pool close (their cleanups were registered earlier): a test that forgets
// a job does not leave it running against closed clients.
func Start(t testing.TB, run func(ctx context.Context) error) *Job {
	ctx, cancel := context.WithCancel(context.Background())
	j := &Job{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(j.done)
		j.err = run(ctx)
	}()
	t.Cleanup(func() { _ = j.Stop() })
	return j
}

// Done is closed when the job has returned.
func (j *Job) Done() <-chan struct{} { return j.done }

// Stop cancels the job's context, waits for it to return and returns its
// error; calling it again returns the same error.
func (j *Job) Stop() error {
	j.cancel()
	<-j.done
	return j.err
}
