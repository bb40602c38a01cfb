package quotas

// The microversions (2.N) that change what this package accepts or answers,
// named after what they bring.
const (
	mvNoProxyQuotas     = 36 // 2.36: the network proxy quotas gone
	mvNoImageMetaLimit  = 39 // 2.39: maxImageMeta gone
	mvGroupQuotaClasses = 50 // 2.50: server group quotas in quota classes
	mvNoPersonality     = 57 // 2.57: the personality (injected file) quotas gone
)
