package osc

import (
	"os"
	"testing"

	"github.com/ingot-dev/ingot/internal/ingottest"
)

func TestMain(m *testing.M) { os.Exit(ingottest.Main(m)) }
