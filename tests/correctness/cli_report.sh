#!/usr/bin/env bash
# `temper report`, `temper tune --report` and `temper db probe` end to end: a probe and a
# short tuning job write the page, `temper report` redraws it from the log (also from an
# empty one, and from two logs merged); a log from a newer Temper, a missing log and an
# unwritable page are refused and the log left as it was. (test_report_browser opens a
# page in Chromium.)
# Usage: cli_report.sh TEMPER
set -u
temper="$1"
here="$(cd "$(dirname "$0")" && pwd)"
expect_error="$here/../error/cli_expect_error.sh"
source "$here/cli_test_lib.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/temper_cli_report_XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

W=matmul:M=64,N=48,K=32
run db probe --db probed.db --threads 1
expect '^machine probe, 1 thread: fp32 FMA peak [0-9]+ GFLOP/s, int8 dot-product peak ([0-9]+ GOP/s|- \(no VNNI\)), memory bandwidth [0-9]+ GB/s$'
[[ $(count probed.db "SELECT count(*) FROM machine_probes WHERE fp32_gflops > 0 AND bandwidth_gbs > 0") == 1 ]] ||
  fail "the probe is not in the log"

# A page drawn from a log with a probe but no records.
run report --db probed.db -o empty.html
expect 'wrote empty.html: 0 records of 0 workloads from probed.db'
expect 'the log holds no records yet'
grep -q 'window.TEMPER_REPORT = ' empty.html || fail "empty.html holds no report data"
grep -q '"workloads":\[\]' empty.html || fail "empty.html lists workloads"

# tune --report probes a log that has no probe of this machine, then writes the page.
run tune "$W" --db tuned.db --trials 8 --repeat 1 --min-repeat-ms 1 --report tuned.html
expect '^probe +measuring this machine'
expect '^report +tuned.html$'
[[ $(count tuned.db "SELECT count(*) FROM machine_probes") == 1 ]] || fail "tune --report did not probe once"
grep -q '"workload":"matmul:M=64,N=48,K=32' tuned.html || fail "tuned.html does not show the workload"
grep -q 'Chart.js v' tuned.html || fail "tuned.html does not hold Chart.js"
! grep -Eq '<script[^>]* src=|<link[^>]* href=' tuned.html || fail "tuned.html loads something from elsewhere"
# A second job finds the probe.
run tune "$W" --db tuned.db --trials 12 --repeat 1 --min-repeat-ms 1 --report tuned.html
expect_not '^probe '
[[ $(count tuned.db "SELECT count(*) FROM machine_probes") == 1 ]] || fail "the second job probed again"

# Two logs merged: the probe goes with the records.
run db merge --db merged.db tuned.db probed.db
expect 'added 2 machine probes'
run report --db merged.db -o merged.html --title 'two logs'
expect 'wrote merged.html: [0-9]+ records of 1 workloads from merged.db'
grep -q '<title>two logs</title>' merged.html || fail "merged.html lacks its title"

# Refusals: nothing written, the log untouched.
cp tuned.db future.db
printf '\x00\x00\x00\x63' | dd of=future.db bs=1 seek=60 conv=notrunc status=none
before="$(md5sum <future.db)"
must_fail 'future.db was written by a newer Temper \(schema 99\)' report --db future.db -o future.html
[[ $(md5sum <future.db) == "$before" ]] || fail "future.db was changed"
[[ ! -e future.html ]] || fail "a page was written for a refused log"
must_fail 'no tuning log at absent.db' report --db absent.db -o absent.html
[[ ! -e absent.db ]] || fail "report created absent.db"
must_fail "a machine probe measures the CPU" db probe --db unprobed.db --target c
[[ ! -e unprobed.db ]] || fail "a refused probe created unprobed.db"
must_fail 'cannot write the report to /nonexistent/dir/r.html' report --db tuned.db -o /nonexistent/dir/r.html
must_fail 'cannot write --report /nonexistent/dir/r.html: its folder /nonexistent/dir does not exist' \
  tune "$W" --db tuned.db --trials 1 --report /nonexistent/dir/r.html
TEMPER_CHARTJS=/nonexistent/chart.js must_fail 'TEMPER_CHARTJS=/nonexistent/chart.js is not a file' \
  report --db tuned.db -o x.html
must_fail 'a machine probe measures the CPU, for an llvm target, not c' db probe --db probed.db --target c
echo "PASS"
