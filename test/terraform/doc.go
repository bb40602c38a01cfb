// Package terraform runs Terraform (the `terraform` binary on PATH) with
// the OpenStack provider (terraform-provider-openstack v3.4.0, built once
// from the Go module proxy into the user's cache directory) against ingot
// behind a real Keystone, with the simulated Ironic: on the embedded
// volume backend and on a real Cinder (internal/cindertest), as a member
// user. Each configuration is applied, planned again (no changes) and
// destroyed: an image boot with a data volume, a boot from a volume, and
// openstack_compute_volume_attach_v2 on the running server. Right after
// `terraform destroy` returns, the nodes must be available with no
// instance, no Cinder attachment and no Ironic volume target left, and the
// volumes deleted or available as configured.
//
// TestTerraformAdopt moves a Terraform state from a real Nova
// (internal/novatest, on the real Ironic with Neutron and Glance) to ingot:
// two servers applied against Nova (one with a key pair, metadata and
// tags), nova-compute disabled and stopped, `ingot adopt --from-nova`,
// `ingot serve`, the catalog's compute endpoints moved to ingot; then a
// plan must show no changes and `terraform destroy` through ingot must
// leave the nodes available. Skipped when Nova or Ironic is not installed.
//
// Opt-in: INGOT_TERRAFORM=1 go test -count=1 -timeout 20m -run '^TestTerraform$' ./test/terraform/
// (.ci/test.sh runs it beside Tempest), or -run TestTerraformAdopt (75-100 s,
// not in .ci/test.sh). Skipped when terraform is not on
// PATH. INGOT_TERRAFORM_DIR=DIR keeps the work directories (configurations,
// state, TF_LOG=DEBUG logs of each command) there.
package terraform
