// Package osc proves that existing OpenStack clients work against ingot
// unmodified: Debian's `openstack` CLI (python3-openstackclient 6.0,
// novaclient 18.1, openstacksdk 0.101) driven against the real `ingot serve`
// binary, and gophercloud's compute v2 client against the whole service.
//
//	go test ./test/osc                       # skips the CLI half without /usr/bin/openstack
//	INGOT_TEST_IRONIC=1 go test ./test/osc   # as CI: a missing CLI fails
//
// .ci/install-osc.sh installs the CLI. docs/clients.md is the conformance
// table these tests keep true.
package osc
