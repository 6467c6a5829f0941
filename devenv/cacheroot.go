package devenv

// CacheRoot is the directory holding the nodes' data file caches (one
// sub-directory per node). Tests empty it to force rebuilds from Kafka.
func (e *Env) CacheRoot() string { return e.cacheRoot }
