#!/usr/bin/env bash
# Builds Temper with AddressSanitizer and UndefinedBehaviorSanitizer in ./build-asan
# (BUILD_DIR overrides it) and runs the unit and error tests there; a sanitizer's report
# fails the test it happens in. With --subset it builds only the programs of the error
# tests (the CLI, the fuzz harnesses' replays, the error suites) and the unit tests of the
# tuning log, the parsers and the measurer, and runs those: what CI can afford. Further
# arguments go to ctest (e.g. -R TuningDb).
# Usage: scripts/sanitize.sh [--subset] [ctest arguments...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build-asan}"
targets=""
if [[ "${1:-}" == "--subset" ]]; then
  shift
  targets="temper temper-measure-worker temper-compile-worker
    test_measure_faults test_onnx_import_errors test_schedule_errors test_te_errors test_tuning_db_errors
    test_workload_errors
    replay_json_lines replay_npy replay_onnx_import replay_plan replay_target replay_trace replay_workload
    test_tuning_db test_tuning_db_maintenance test_tuning_db_migration test_record_replay_check test_npy
    test_workload test_onnx_import test_schedule_trace test_execution_plan test_measure test_compile_pool"
fi
# -O1 -g1, as the sanitizers' authors advise: about half the compile time of -O2 -g, and
# reports still name the line.
BUILD_DIR="$build" BUILD_TARGETS="$(echo $targets)" "$root/scripts/build.sh" -DTEMPER_BUILD_TESTS=ON \
  -DTEMPER_VERIFY_IR=ON -DTEMPER_SANITIZE=address,undefined "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
cd "$build"
# Leaks are not reported: the JIT and the OpenCL platform keep what they allocate for the
# process's life by design. Everything else (overflows, use after free, UB) stops the test.
# The fault tests crash candidates on purpose: their signals stay the measure worker's.
# An allocation too large to make returns null, as malloc does, for the runtime to report
# (the out-of-memory tests ask for 2^62 bytes).
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:handle_segv=0:handle_abort=0:handle_sigbus=0:handle_sigfpe=0:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
# The tests of programs --subset did not build are not run (ctest lists them as NAME_NOT_BUILT,
# without a label).
ctest --output-on-failure -j"$(nproc)" --timeout 900 -L "unit|error" "$@"
