package adopt

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/flavors"
	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/store"
)

// chooseFlavor is the flavor an adopted node's server records: the one
// asked for (id or name), else the one enabled flavor of the node's
// resource class — with several, the one whose disk is the instance's
// root_gb. A reason when there is none or the choice is ambiguous.
func chooseFlavor(all []store.Flavor, n ironic.Deployed, want string) (store.Flavor, string) {
	if want != "" {
		for _, byName := range []bool{false, true} {
			for _, f := range all {
				if (!byName && f.ID == want) || (byName && f.Name == want) {
					return f, ""
				}
			}
		}
		return store.Flavor{}, fmt.Sprintf("unknown flavor: %s", want)
	}
	var fit []store.Flavor
	for _, f := range all {
		if !f.Disabled && f.ResourceClass != "" && strings.EqualFold(f.ResourceClass, n.ResourceClass) {
			fit = append(fit, f)
		}
	}
	if len(fit) > 1 {
		root := num(n.InstanceInfo, "root_gb", -1)
		if same := slices.DeleteFunc(slices.Clone(fit), func(f store.Flavor) bool { return f.DiskGB != root }); len(same) == 1 {
			fit = same
		}
	}
	switch len(fit) {
	case 0:
		return store.Flavor{}, fmt.Sprintf("unknown flavor: none has resource class %q", n.ResourceClass)
	case 1:
		return fit[0], ""
	}
	names := make([]string, len(fit))
	for i, f := range fit {
		names[i] = f.Name
	}
	return store.Flavor{}, fmt.Sprintf("ambiguous flavor: %s all have resource class %q; choose one with --flavor",
		strings.Join(names, ", "), n.ResourceClass)
}

// flavorSpec is the flavor as a create resolves it (traits, capabilities).
func flavorSpec(f store.Flavor) catalog.Flavor { return flavors.ToCatalog(f) }
