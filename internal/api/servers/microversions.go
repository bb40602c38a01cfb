package servers

// The microversions (2.N) that change what this package accepts or answers,
// named after what they bring.
const (
	mvExtendedAttrs        = 3  // 2.3: reservation_id and the other extended attributes; delete_on_termination in volumes_attached
	mvIP6Filter            = 5  // 2.5: the ip6 filter for everyone
	mvRemoteConsoles       = 6  // 2.6: POST /servers/{id}/remote-consoles
	mvLocked               = 9  // 2.9: locked in the server body
	mvGroupOwner           = 13 // 2.13: project_id and user_id of a server group
	mvSoftAffinity         = 15 // 2.15: the soft-affinity and soft-anti-affinity policies
	mvHostStatus           = 16 // 2.16: host_status
	mvDescription          = 19 // 2.19: a server description
	mvTags                 = 26 // 2.26: server tags (the tags routes, tags in the body, tag filters)
	mvStrictStatus         = 38 // 2.38: an unknown status filter is a 400
	mvUsagePaging          = 40 // 2.40: limit and marker on os-simple-tenant-usage
	mvEmbeddedFlavor       = 47 // 2.47: the flavor embedded in the server body
	mvEventsForAll         = 51 // 2.51: instance action events for every caller
	mvCreateTags           = 52 // 2.52: tags at create
	mvRebuildKeyName       = 54 // 2.54: key_name at rebuild
	mvRebuildUserData      = 57 // 2.57: user_data at rebuild; personality gone
	mvActionUpdatedAt      = 58 // 2.58: updated_at of an instance action
	mvMigrationsPaging     = 59 // 2.59: limit, marker and changes-since on os-migrations
	mvEventHost            = 62 // 2.62: host and hostId of an action event
	mvTrustedCerts         = 63 // 2.63: trusted_image_certificates
	mvGroupPolicy          = 64 // 2.64: a server group's single policy and its rules
	mvChangesBefore        = 66 // 2.66: the changes-before filter
	mvAttachmentTag        = 70 // 2.70: tag of a volume attachment
	mvServerGroups         = 71 // 2.71: server_groups in the server body
	mvLockReason           = 73 // 2.73: locked_reason, a lock with a reason, locked as a sort key
	mvAPICleanup           = 75 // 2.75: the rebuild answer as show's; ignored sort keys refused
	mvAttachmentDeleteFlag = 79 // 2.79: delete_on_termination of a volume attachment
	mvEventDetails         = 84 // 2.84: details of an action event
	mvAttachmentID         = 89 // 2.89: attachment_id of a volume attachment, its id gone
	mvHostname             = 90 // 2.90: a settable hostname
)
