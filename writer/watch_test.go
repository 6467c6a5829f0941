package writer_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

// watchRunning reports whether a writer's watch loop is running in this
// process, from the stacks of all goroutines.
func watchRunning() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "writer.(*watch).run")
}

// TestWatchEndsWithLastWriter: when the last writer of a node stops, the
// node's watch loop ends at once, not after its next commit interval (a
// stopped node leaves no look running behind it; the e2e leak check saw
// one).
func TestWatchEndsWithLastWriter(t *testing.T) {
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "watch", Topic: "watch", ValueFormat: "raw"})
	w := writer.New(f.Pool, f.Client, writer.Config{CommitInterval: time.Minute})
	wl := f.Take(t, tables.WriterScope(f.Table.ID), "node-a")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, wl) }()
	testkit.WaitFor(t, "the watch loop started", watchRunning)
	time.Sleep(200 * time.Millisecond) // the first look is done; the loop waits for its tick
	require.True(t, watchRunning())
	cancel()
	<-done
	deadline := time.Now().Add(2 * time.Second)
	for watchRunning() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.False(t, watchRunning(), "the watch loop still runs after its last writer stopped")
}
