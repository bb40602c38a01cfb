package api

// identityRoutes registers the keypair routes and the quota and limit sets
// (Nova's, and the read-only Cinder and Neutron ones `openstack quota show`
// reads).
func (s *Service) identityRoutes() {
	s.Compute("GET /v2.1/os-keypairs", s.keypairs.ListKeypairs)
	s.Compute("POST /v2.1/os-keypairs", s.keypairs.CreateKeypair)
	s.Compute("GET /v2.1/os-keypairs/{name}", s.keypairs.ShowKeypair)
	s.Compute("DELETE /v2.1/os-keypairs/{name}", s.keypairs.DeleteKeypair)

	s.Compute("GET /v2.1/os-quota-sets/{project}", s.quotas.ShowQuotas)
	s.Compute("GET /v2.1/os-quota-sets/{project}/detail", s.quotas.ShowQuotas)
	s.Compute("GET /v2.1/os-quota-sets/{project}/defaults", s.quotas.QuotaDefaults)
	s.Compute("PUT /v2.1/os-quota-sets/{project}", s.quotas.UpdateQuotas)
	s.Compute("DELETE /v2.1/os-quota-sets/{project}", s.quotas.DeleteQuotas)
	s.Compute("GET /v2.1/limits", s.quotas.Limits)
	s.quotas.ClassRoutes()

	s.Plain("GET /volume/v3/{project}/os-quota-sets/{target}", s.quotas.VolumeQuotas)
	s.Plain("GET /volume/v3/{project}/limits", s.quotas.VolumeLimits)
	for _, prefix := range []string{"/v2.1", "/v2.1/v2.0", "/network/v2.0"} {
		s.Plain("GET "+prefix+"/quotas/{project}", s.quotas.NetworkQuotas)
	}
}
