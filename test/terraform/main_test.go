package terraform

import (
	"os"
	"testing"

	"github.com/ingot-dev/ingot/internal/ingottest"
)

// TestMain removes the ingot binary TestTerraformAdopt builds.
func TestMain(m *testing.M) { os.Exit(ingottest.Main(m)) }
