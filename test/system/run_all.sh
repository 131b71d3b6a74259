#!/bin/bash
# Runs every test/system/test_* (bash scripts with bash, .py with /usr/bin/python3), one after
# the other, each under a time limit, and prints a summary. Exit status: 0 when all passed or
# skipped, 1 otherwise; 77 (SKIP) without root, since the TAP/namespace tests need it.
#
# A test's exit status: 0 PASS, 77 SKIP (it printed why; counted apart, as automake and meson
# do), anything else FAIL. A test that exits 0 must also have printed its summary line
# "<name>: PASS (N checks)" with N > 0 (lib.sh's rsw_finish, the Python tests' own): exit 0
# without any check run is a FAIL.
#
#   sudo test/system/run_all.sh              # all tests
#   sudo test/system/run_all.sh golden       # only tests whose file name contains "golden"
#
# The control-plane tests (test_bgp*.sh, test_copp.sh, helpers in lib_bgp.sh) also need BIRD 2
# (bird2) and, for test_bgp_frr.sh, FRR (frr), both installed by tools/bootstrap, and a roceswd
# built with control_plane support; RSW_BGP_KERNEL_SWITCH=1 runs the BIRD ones with the kernel
# as the switch.
#
# Environment: RSW_TEST_TIMEOUT (seconds per test, default 300); ROCESWD, ROCECTL, BUILD_DIR
# as in lib.sh; RSW_KEEP=1 keeps each test's temp dir.
set -euo pipefail

DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TIMEOUT="${RSW_TEST_TIMEOUT:-300}"
FILTER="${1:-}"

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP system tests: they need root (network namespaces, TAP devices); run with sudo"
    exit 77
fi

tests=()
for t in "$DIR"/test_*; do
    [ -f "$t" ] || continue
    case "$t" in *.sh | *.py) ;; *) continue ;; esac
    if [ -n "$FILTER" ] && [[ "$(basename "$t")" != *"$FILTER"* ]]; then continue; fi
    tests+=("$t")
done
if [ "${#tests[@]}" -eq 0 ]; then
    # shellcheck disable=SC2016  # the quotes are literal; $FILTER does expand
    echo "no system tests found in $DIR${FILTER:+ matching '$FILTER'}"
    exit 1
fi

declare -a results
failed=0
skipped=0
passed=0
out="$(mktemp /tmp/rsw-run-all.XXXXXX)"
trap 'rm -f "$out"' EXIT
for t in "${tests[@]}"; do
    name="$(basename "$t")"
    case "$t" in
        *.py) cmd=(/usr/bin/python3 "$t") ;;
        *) cmd=(bash "$t") ;;
    esac
    echo "===== $name"
    start=$(date +%s)
    set +e
    timeout --signal=TERM --kill-after=30 "$TIMEOUT" "${cmd[@]}" 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    set -e
    secs=$(( $(date +%s) - start ))
    checks="$(sed -n 's/^.*: PASS (\([0-9][0-9]*\) checks)$/\1/p' "$out" | tail -n 1)"
    if [ "$rc" -eq 0 ] && [ "${checks:-0}" -gt 0 ]; then
        results+=("PASS  $name ($checks checks, ${secs} s)")
        passed=$((passed + 1))
    elif [ "$rc" -eq 0 ]; then
        results+=("FAIL  $name (exit 0 without a 'PASS (N checks)' line: no check ran, ${secs} s)")
        failed=$((failed + 1))
    elif [ "$rc" -eq 77 ]; then  # RSW_SKIP: the test printed its reason
        results+=("SKIP  $name (${secs} s)")
        skipped=$((skipped + 1))
    elif [ "$rc" -eq 124 ]; then
        results+=("FAIL  $name (timed out after ${TIMEOUT} s)")
        failed=$((failed + 1))
    else
        results+=("FAIL  $name (exit $rc, ${secs} s)")
        failed=$((failed + 1))
    fi
    # A failed test's own FAIL lines go into the summary too: the summary is the part of a
    # long log that a CI report keeps.
    if [ "${results[-1]:0:4}" = FAIL ]; then
        while IFS= read -r line; do
            results+=("      $line")
        done < <(grep -E '^FAIL ' "$out" | head -n 8)
    fi
done

echo "===== summary"
printf '%s\n' "${results[@]}"
if [ "$failed" -eq 0 ]; then
    echo "system tests: PASS ($passed passed, $skipped skipped, of ${#tests[@]})"
    exit 0
fi
echo "system tests: FAIL ($failed failed, $passed passed, $skipped skipped, of ${#tests[@]})"
exit 1
