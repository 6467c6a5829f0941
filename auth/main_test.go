package auth_test

import (
	"testing"

	"github.com/minkhq/mink/internal/testkit"
)

func TestMain(m *testing.M) { testkit.MainPostgres(m) }
