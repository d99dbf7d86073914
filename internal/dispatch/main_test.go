package dispatch

import (
	"testing"

	"github.com/actorlet/actorlet/test/support/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.Main(m) }
