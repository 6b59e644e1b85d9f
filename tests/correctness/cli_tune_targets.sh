#!/usr/bin/env bash
# `temper tune` for several targets at once: one job per --target into one log, each
# job's lines prefixed with its target, each job resuming on its own; one target prints
# as before; a target this machine cannot run stops the command before anything is
# written. Where an OpenCL device and a GPU template exist, an opencl job runs beside the
# llvm one and its records carry the device's fingerprint.
# Usage: cli_tune_targets.sh TEMPER
set -u
temper="$1"
here="$(cd "$(dirname "$0")" && pwd)"
expect_error="$here/../error/cli_expect_error.sh"
source "$here/cli_test_lib.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/temper_cli_tune_targets_XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export TEMPER_CACHE_DIR="$work/cache"

W=matmul:M=32,N=32,K=32
# No re-measurements at the end (--confirm 0): the record counts are the trials.
fast=(--min-repeat-ms 1 --repeat 2 --batch-size 2 --tuner random --seed 1 --confirm 0)
records_of() { count t.db "select count(*) from records r join targets t on r.target_id = t.id where t.target = '$1'"; }

echo "== two CPU targets at once"
run tune "$W" --db t.db --trials 4 --target llvm --target "llvm -mcpu=native" "${fast[@]}"
expect '^tuner      random, seed 1, 4 trials per target, 2 targets at once$'
for t in 'llvm' 'llvm -mcpu=native'; do
  expect "^\[$t\] template   "
  expect "^\[$t\] trials 4/4 "
  expect "^\[$t\] measured   4 trials, 0 failed"
  expect "^\[$t\] best       [0-9.]+ ms"
  [[ $(records_of "$t") == 4 ]] || fail "expected 4 records of target '$t'"
done
[[ $(count t.db "select count(*) from targets where device != ''") == 0 ]] || fail "a CPU target has a device"

echo "== the same jobs with a larger budget: each resumes"
run tune "$W" --db t.db --trials 6 --target llvm --target "llvm -mcpu=native" "${fast[@]}"
for t in 'llvm' 'llvm -mcpu=native'; do
  expect "^\[$t\] resumed    4 trials were already in the log"
  expect "^\[$t\] measured   2 trials"
  [[ $(records_of "$t") == 6 ]] || fail "expected 6 records of target '$t'"
done

echo "== one target: lines as they always were"
run tune "$W" --db t.db --trials 7 --target llvm "${fast[@]}"
expect '^target     llvm$'
expect '^resumed    6 trials were already in the log'
expect '^measured   1 trials'
expect_not '^\['

echo "== a target without its device: refused before any work"
must_fail "target 'cuda -arch=sm_90 -device=99': .*no CUDA device|NVRTC" \
  tune "$W" --db never.db --target llvm --target "cuda -arch=sm_90 -device=99"
must_fail "targets it can run: llvm -mcpu=native" tune "$W" --db never.db --target "opencl -device=99"
[[ ! -e never.db ]] || fail "a refused job created its log"

echo "== llvm and opencl at once"
if ! "$temper" devices | grep -Eq '^  opencl '; then
  echo "SKIP: no OpenCL device"
elif ! "$temper" show "$W" --target opencl --emit opencl >/dev/null 2>&1; then
  echo "SKIP: no GPU template for matmul yet"
else
  run tune "$W" --db t.db --trials 4 --target llvm --target opencl "${fast[@]}"
  expect '^\[opencl\] measured   4 trials, 0 failed'
  expect '^\[llvm\] resumed    7 trials'
  [[ $(records_of opencl) == 4 ]] || fail "expected 4 records of target 'opencl'"
  [[ $(count t.db "select count(distinct t.device) from records r join targets t on r.target_id = t.id \
                   where t.target = 'opencl' and t.device like '%OpenCL%'") == 1 ]] ||
    fail "the opencl records do not name their device"
fi
echo "PASS"
