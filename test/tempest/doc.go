// Package tempest runs Tempest's compute API tests (Debian's Tempest 33,
// the suite the OpenStack community measures Nova with) against `ingot
// serve` behind a real Keystone (internal/keystonetest), and fails on any
// failing test not listed, with its reason, in expected-failures.txt.
//
// Opt-in: INGOT_TEMPEST=1 go test -count=1 -timeout 20m -run TestTempest ./test/tempest/
// (.ci/run does it in a step of its own; .ci/install-tempest.sh installs
// Tempest). INGOT_TEMPEST_DIR=DIR keeps the workspace (tempest.conf,
// accounts.yaml, tempest.log, ingot.log, results.json, summary.txt) there.
// INGOT_TEMPEST_REGEX overrides the selection.
//
// INGOT_GOPHERCLOUD=1 go test -count=1 -timeout 40m -run TestGophercloud ./test/tempest/
// runs gophercloud's own compute acceptance tests (the go.mod version, from
// the module cache) the same way, as Keystone's admin, one process a test,
// against gophercloud-expected-failures.txt.
package tempest
