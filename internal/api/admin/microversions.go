package admin

// The microversions (2.N) that change what this package accepts or answers,
// named after what they bring.
const (
	mvForcedDown       = 11 // 2.11: forced_down of a service
	mvCPUInfoObject    = 28 // 2.28: cpu_info of a hypervisor as an object
	mvHypervisorPaging = 33 // 2.33: limit and marker on os-hypervisors
	mvAggregateUUID    = 41 // 2.41: uuid of an aggregate
	mvHostsRemoved     = 43 // 2.43: os-hosts is gone (404)
	mvUUIDs            = 53 // 2.53: services and hypervisors by UUID; their query parameters
	mvAPICleanup       = 75 // 2.75: unknown os-services query parameters refused
	mvHypervisorTrim   = 88 // 2.88: hypervisor resources, uptime and statistics gone
)
