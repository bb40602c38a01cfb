// Package console tests the operator console (internal/ui) end to end: the
// `ingot serve` binary with its built-in simulated Ironic, driven through
// its API and the simulator's /_sim/ admin API, and looked at in a real
// headless Chromium (Debian's, .ci/install-chromium.sh) driven with
// chromedp. Missing Chromium skips the tests unless INGOT_TEST_IRONIC=1.
//
// Screenshots of every page go to $INGOT_TEST_ARTIFACTS/console when that
// is set (CI keeps them), else to the test's temporary directory; they are
// never committed.
package console
