package cluster

// Internals for the tests of package cluster_test, which drive the
// cluster through its exported API as a node does, and read the lease SQL
// and the node ordering from here.

var (
	SQLLeaseTake  = sqlLeaseTake
	SQLLeasesRead = sqlLeasesRead
	TopNode       = topNode
)

// Crash makes c's Run end like a crashed process when its context is
// cancelled: jobs stop, but no lease is released and the row stays.
func Crash(c *Cluster) { c.crash.Store(true) }

// ConfigOf returns c's configuration with its defaults.
func ConfigOf(c *Cluster) Config { return c.cfg }
