package e2e

import (
	"testing"

	"github.com/minkhq/mink/internal/testkit"
)

func TestMain(m *testing.M) { testkit.MainPostgres(m) }
