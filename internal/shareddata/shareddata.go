// Package shareddata finds the files of the shared data directory (the
// USGS feed, the flight records) that the demo, tests and benchmarks read
// and that the repository does not hold.
package shareddata

import (
	"os"
	"path/filepath"
)

// Find returns the path of a file of the shared data directory: under
// $MINK_DATA_DIR, else ../shared/data (or ../../shared/data, …) from the
// working directory up. ok is false when it is absent.
func Find(name string) (path string, ok bool) {
	if dir := os.Getenv("MINK_DATA_DIR"); dir != "" {
		p := filepath.Join(dir, name)
		_, err := os.Stat(p)
		return p, err == nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		p := filepath.Join(dir, "..", "shared", "data", name)
		if _, err := os.Stat(p); err == nil {
			return filepath.Clean(p), true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
