package flavors

// The microversions (2.N) that change what this package accepts or answers,
// named after what they bring.
const (
	mvFlavorDescription = 55 // 2.55: a flavor description (and PUT /flavors/{id})
	mvFlavorExtraSpecs  = 61 // 2.61: extra_specs in the flavor body
	mvAPICleanup        = 75 // 2.75: swap 0 rather than ""
)
