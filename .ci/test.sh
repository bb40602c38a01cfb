#!/usr/bin/env bash
# The whole test run, as `make test` and CI (.ci/run) run it: installs what
# is missing (Debian's packages, idempotent), checks gofmt and go vet, runs
# every suite on SQLite with the real services, reruns the store-sensitive
# suites on PostgreSQL beside Tempest's, gophercloud's and openstacksdk's
# compute API suites and Terraform's OpenStack provider
# (they share no state), and fuzzes the request parsers.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
step() { echo "== $* ($(( $(date +%s) - start ))s)"; }

# PostgreSQL and RabbitMQ are started before the session on this kind of
# machine; start them if they are down.
if command -v pg_isready >/dev/null && ! pg_isready -h 127.0.0.1 -p 5432 -q; then
	pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
fi
if command -v rabbitmqctl >/dev/null && ! rabbitmqctl -q status >/dev/null 2>&1; then
	rabbitmq-server -detached || true
	rabbitmqctl -q --timeout 60 await_startup || true
fi

step "installs (.ci/install-*.sh)"
for script in .ci/install-*.sh; do
	bash "$script"
done

step "gofmt / go vet"
unformatted=$(gofmt -l cmd internal test deploy)
if [ -n "$unformatted" ]; then
	echo "gofmt needed:"; echo "$unformatted"; exit 1
fi
go vet ./...

# Three test binaries at once, not GOMAXPROCS (2): most suites wait on real
# services far more than they compute, so a third keeps the cores busy
# (measured: 17 min instead of 28 for the same packages, all green).
step "tests (INGOT_TEST_IRONIC=1 go test -p 3 -count=1 -timeout 25m ./...)"
export INGOT_TEST_IRONIC=1
go test -p 3 -count=1 -timeout 25m ./...

step "side by side: the scenario catalogue, ingot adopt and the kill -9 cases on PostgreSQL; Tempest's compute API tests, with the embedded backends and with Neutron and Glance; gophercloud's compute acceptance tests; openstacksdk's functional compute tests; Terraform's OpenStack provider"
logs=$(mktemp -d)
# summarize keeps a suite's own verdict lines (its tests' t.Log lines and
# the --- FAIL/ok lines), then the last N lines (the services' logs).
summarize() {
	local f
	f=$(mktemp)
	grep -v '^=== RUN' >"$f" || true
	grep -E '^ {4}[a-z_]+_test\.go:[0-9]+:|^ *--- (FAIL|PASS|SKIP)|^(ok|FAIL|PASS)' "$f" | head -n 100 || true
	echo "   (last $1 lines)"
	tail -n "$1" "$f"
	rm -f "$f"
}
(
	INGOT_TEST_STORE=postgres go test -count=1 -timeout 15m ./test/scenario &&
	INGOT_TEST_STORE=postgres go test -count=1 -timeout 10m -skip 'TestAdoptFromNova' ./test/adopt &&
	INGOT_TEST_STORE=postgres go test -count=1 -timeout 15m -run 'TestKill9Sim|TestKill9Operations|TestKill9RandomInstants' ./test/crash
) >"$logs/postgres.log" 2>&1 &
pg=$!
# pipefail (set above) makes the step's status go test's, not tail's.
(INGOT_TEMPEST=1 go test -count=1 -timeout 20m -v -run '^TestTempest$' ./test/tempest/ 2>&1 | summarize 200) >"$logs/tempest.log" 2>&1 &
tempest=$!
(INGOT_GOPHERCLOUD=1 go test -count=1 -timeout 20m -v -run '^TestGophercloud$' ./test/tempest/ 2>&1 | summarize 80) >"$logs/gophercloud.log" 2>&1 &
gopher=$!
(INGOT_TEMPEST_CLOUD=1 go test -count=1 -timeout 40m -v -run '^TestTempestCloud$' ./test/tempest/ 2>&1 | summarize 200) >"$logs/tempest-cloud.log" 2>&1 &
tempest_cloud=$!
(INGOT_OPENSTACKSDK=1 go test -count=1 -timeout 20m -v -run '^TestOpenStackSDK$' ./test/tempest/ 2>&1 | summarize 80) >"$logs/sdk.log" 2>&1 &
sdk=$!
# The provider is built once into the user's cache directory (go install).
(INGOT_TERRAFORM=1 go test -count=1 -timeout 20m -v -run '^TestTerraform(Adopt)?$' ./test/terraform/ 2>&1 | summarize 120) >"$logs/terraform.log" 2>&1 &
terraform=$!
pg_status=0; wait "$pg" || pg_status=$?
tempest_status=0; wait "$tempest" || tempest_status=$?
gopher_status=0; wait "$gopher" || gopher_status=$?
sdk_status=0; wait "$sdk" || sdk_status=$?
tempest_cloud_status=0; wait "$tempest_cloud" || tempest_cloud_status=$?
terraform_status=0; wait "$terraform" || terraform_status=$?
echo "-- PostgreSQL (exit $pg_status)"; cat "$logs/postgres.log"
echo "-- Tempest (exit $tempest_status)"; cat "$logs/tempest.log"
echo "-- gophercloud's compute acceptance tests (exit $gopher_status)"; cat "$logs/gophercloud.log"
echo "-- openstacksdk's functional compute tests (exit $sdk_status)"; cat "$logs/sdk.log"
echo "-- Tempest with Neutron and Glance (exit $tempest_cloud_status)"; cat "$logs/tempest-cloud.log"
echo "-- Terraform's OpenStack provider (exit $terraform_status)"; cat "$logs/terraform.log"

# Bounded by executions, not by time: a time bound races Go's fuzzing
# coordinator at its end on a loaded machine ("context deadline exceeded"
# with no failing input); 30,000 executions take about 10-20 s here.
step "fuzzing the request parsers (30,000 executions per target)"
for target in FuzzCreateServer FuzzServerAction FuzzListQuery FuzzMicroversion; do
	go test -run '^$' -fuzz "^${target}\$" -fuzztime 30000x ./internal/api/
done

step "done"
if [ "$pg_status" -ne 0 ]; then echo "the PostgreSQL reruns failed (see above)"; exit "$pg_status"; fi
if [ "$tempest_status" -ne 0 ]; then echo "Tempest's compute API tests failed (see above)"; exit "$tempest_status"; fi
if [ "$gopher_status" -ne 0 ]; then echo "gophercloud's compute acceptance tests failed (see above)"; exit "$gopher_status"; fi
if [ "$tempest_cloud_status" -ne 0 ]; then echo "Tempest's compute API tests with Neutron and Glance failed (see above)"; exit "$tempest_cloud_status"; fi
if [ "$sdk_status" -ne 0 ]; then echo "openstacksdk's functional compute tests failed (see above)"; exit "$sdk_status"; fi
if [ "$terraform_status" -ne 0 ]; then echo "Terraform's OpenStack provider test failed (see above)"; exit "$terraform_status"; fi
