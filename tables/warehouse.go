package tables

import (
	"net/netip"
	"regexp"
	"strings"

	"github.com/minkhq/mink/internal/settings"
)

// DefaultWarehouse is the warehouse when none is configured (--warehouse).
const DefaultWarehouse = "mink"

var warehouseName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{1,61}[A-Za-z0-9]$`)

// reservedWarehouses are the first path segments of a node's other
// routes: a warehouse so named would answer /<name> (HeadBucket) and
// /<name>/<key> in their place, or they in its.
var reservedWarehouses = []string{"v1", "admin", "ui", "metrics", "debug", "healthz", "readyz"}

// CheckWarehouse returns a *settings.Error (key warehouse) unless name can
// be the warehouse: the S3 bucket of every table location,
// s3://<warehouse>/<namespace levels>/<table>, which the S3 API answers
// at /<warehouse>/<key>. S3's bucket naming rules (Amazon S3 User Guide,
// "Bucket naming rules"): 3 to 63 characters, starting and ending with a
// letter or digit, no two adjacent periods, not an IP address; letters
// of either case and '_' as S3's legacy rules allowed them (clients still
// take them in path style, and older warehouses have them). Not one of
// the node's route names (v1, admin, ui, metrics, debug, healthz, readyz,
// in any case), which the warehouse's path would collide with.
func CheckWarehouse(name string) error {
	switch {
	case !warehouseName.MatchString(name):
		return settings.Errorf("warehouse", "%q is not a bucket name (3 to 63 of [A-Za-z0-9._-], starting and ending with a letter or digit)", name)
	case strings.Contains(name, ".."):
		return settings.Errorf("warehouse", "%q is not a bucket name (two adjacent periods)", name)
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return settings.Errorf("warehouse", "%q is not a bucket name (an IP address)", name)
	}
	for _, r := range reservedWarehouses {
		if strings.EqualFold(name, r) {
			return settings.Errorf("warehouse", "%q is the path of another of the node's routes (%s): choose another bucket name",
				name, strings.Join(reservedWarehouses, ", "))
		}
	}
	return nil
}
