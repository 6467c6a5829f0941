package tables

import (
	"regexp"

	"github.com/minkhq/mink/internal/settings"
)

// DefaultWarehouse is the warehouse when none is configured (--warehouse).
const DefaultWarehouse = "mink"

var warehouseName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// CheckWarehouse returns a *settings.Error (key warehouse) unless name can
// be the warehouse: the S3 bucket of every table location,
// s3://<warehouse>/<namespace levels>/<table>, which the S3 API answers
// at /<warehouse>/<key>. A name is one path segment of [A-Za-z0-9._-].
func CheckWarehouse(name string) error {
	if !warehouseName.MatchString(name) {
		return settings.Errorf("warehouse", "%q is not a bucket name ([A-Za-z0-9._-]+)", name)
	}
	return nil
}
