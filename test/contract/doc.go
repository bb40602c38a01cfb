// Package contract pins, over raw HTTP at microversion 1.78, every behaviour of
// the Ironic API that ingot relies on. The checks are written once (a table in
// the tests) and run against the simulator (internal/ironicsim) always and
// against Debian's real Ironic 21.4 when it is installed (.ci/install-ironic.sh):
//
//	go test ./test/contract                      # real Ironic skipped if missing
//	INGOT_TEST_IRONIC=1 go test ./test/contract  # as CI: a missing Ironic fails
//
// The expected answers are the real Ironic's, as measured in docs/ironic.md.
// A check that fails against the simulator only is a divergence of the
// simulator; the failure message gives the call, the simulator's answer and
// the real one. TestContractHasTeeth runs the checks against deliberately
// broken simulators and requires them to fail.
package contract
