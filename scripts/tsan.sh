#!/usr/bin/env bash
# ThreadSanitizer over the tuning loop's threads (not OpenMP's: see below): builds the command line, the measure
# worker and the tests of the tuning loop, the measurer and the log with -fsanitize=thread
# in ./build-tsan (BUILD_DIR overrides it), runs those tests, then a tuning job of two
# targets at once (a thread per target, one log, the shared MachineShare), with the xgb
# tuner (its cost model trains and predicts between batches) and the builder's compile
# threads. Any report fails the run (halt_on_error).
# Usage: scripts/tsan.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build-tsan}"
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTEMPER_BUILD_TESTS=ON -DTEMPER_SANITIZE=thread >/dev/null
cmake --build "$build" -j"$(nproc)" --target temper temper-measure-worker temper-compile-worker test_tune_loop test_measure test_tuning_db

# OpenMP loops (featurizing, XGBoost) run on one thread: libgomp is not instrumented, so
# TSan cannot see its barriers and would take what they order for races. Those loops
# split disjoint indices; the threads checked here are Temper's own.
export OMP_NUM_THREADS=1
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/scripts/tsan.supp:${TSAN_OPTIONS:-}"
work="$(mktemp -d "${TMPDIR:-/tmp}/temper_tsan_XXXXXX")"
trap 'rm -rf "$work"' EXIT
export TEMPER_CACHE_DIR="$work/cache"

for t in test_tuning_db test_measure test_tune_loop; do
  echo "== $t"
  "$build/tests/$t" --gtest_brief=1
done
echo "== temper tune, two targets at once, xgb"
"$build/cli/temper" tune matmul:M=64,N=64,K=64 --db "$work/t.db" --trials 24 --batch-size 8 \
  --target llvm --target "llvm -mcpu=native" --tuner xgb --min-repeat-ms 1 --repeat 2 --seed 1
echo "tsan.sh: no data race or lock-order report"
