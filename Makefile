# `make test` is the whole test run, as CI runs it (.ci/run calls it):
# installs what is missing, then every suite (.ci/test.sh says how).

SEEDS ?= 1000000
BASE  ?= $(shell date +%s)

.PHONY: test quick soak soak-churn

test:
	bash .ci/test.sh

# Only the Go tests, with what is installed (a missing service is skipped).
quick:
	go test -count=1 -timeout 25m ./...

# The deterministic simulation over many seeds (default a million, from a
# base that changes with the time so each soak explores new seeds). A failing
# seed prints the one-line command that replays it.
soak:
	INGOT_DST_SEEDS=$(SEEDS) INGOT_DST_BASE=$(BASE) go test -count=1 -timeout 0 -run 'TestDST$$' -v ./test/dst

# The churn soak (test/soak, not in CI): DURATION of creates, deletes and
# reboots at RATE with seeded faults and kill -9s, on MODE sqlite or
# replicas (three on PostgreSQL); RSS, goroutines and open files sampled
# (CSV under soak-out/) and checked flat, the history checked at the end.
DURATION ?= 1h
MODE     ?= sqlite
RATE     ?= 2/s
SEED     ?= $(BASE)
soak-churn:
	mkdir -p soak-out
	INGOT_SOAK=$(DURATION) INGOT_SOAK_MODE=$(MODE) INGOT_SOAK_RATE=$(RATE) INGOT_SOAK_SEED=$(SEED) \
		go test -count=1 -timeout 0 -run 'TestSoak$$' -v -artifacts -outputdir $(CURDIR)/soak-out ./test/soak
