# Small conveniences; the tests themselves need nothing but `go test`.

SEEDS ?= 1000000
BASE  ?= $(shell date +%s)

.PHONY: test soak

# The tests as README.md and .ci/run run them (the real-Ironic half runs when
# /usr/bin/ironic exists; INGOT_TEST_IRONIC=1 makes a missing Ironic a failure).
test:
	go test -count=1 -timeout 25m ./...

# The deterministic simulation over many seeds (default a million, from a
# base that changes with the time so each soak explores new seeds). A failing
# seed prints the one-line command that replays it.
soak:
	INGOT_DST_SEEDS=$(SEEDS) INGOT_DST_BASE=$(BASE) go test -count=1 -timeout 0 -run 'TestDST$$' -v ./test/dst
