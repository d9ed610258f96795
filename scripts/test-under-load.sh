#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: 2026 The Threading authors
#
# Runs the test suite while every core is kept busy by other processes (one spinning process per CPU), so that
# tests meet what a loaded CI machine or a shared server gives them: threads that lose their CPU at any moment.
# Usage: scripts/test-under-load.sh [RUNS] [extra `swift test` arguments...]   (RUNS defaults to 1)
# Prints one line per run and a closing "N passed, N failed" line; exits non-zero if any run failed. The log of
# each run is kept in ${TMPDIR:-/tmp}/threading-load-run-N.log.
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${1:-1}"
shift || true
cpus="$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)"
./scripts/ensure-liburcu.sh
swift build --build-tests "$@" >/dev/null

hogs=()
stop_hogs() {
    for pid in "${hogs[@]:-}"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap stop_hogs EXIT
for _ in $(seq 1 "$cpus"); do
    (while :; do :; done) &
    hogs+=("$!")
done

passed=0
failed=0
for run in $(seq 1 "$runs"); do
    log="${TMPDIR:-/tmp}/threading-load-run-$run.log"
    start=$(date +%s)
    if swift test --skip-build "$@" >"$log" 2>&1; then
        passed=$((passed + 1))
        verdict=passed
    else
        failed=$((failed + 1))
        verdict="FAILED (log: $log)"
    fi
    summary="$(grep -E 'Test run with' "$log" | tail -1 | sed 's/^[^A-Za-z]*//')"
    echo "load run $run of $runs with $cpus busy processes: $verdict in $(( $(date +%s) - start )) s: $summary"
done
echo "load: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
