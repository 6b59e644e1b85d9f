#!/usr/bin/env bash
# Builds Temper with AddressSanitizer and UndefinedBehaviorSanitizer in ./build-asan
# (BUILD_DIR overrides it) and runs the unit and error tests there; a sanitizer's report
# fails the test it happens in. Extra arguments go to ctest (e.g. -R TuningDb).
# Usage: scripts/sanitize.sh [ctest arguments...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build-asan}"
BUILD_DIR="$build" "$root/scripts/build.sh" -DTEMPER_BUILD_TESTS=ON -DTEMPER_VERIFY_IR=ON \
  -DTEMPER_SANITIZE=address,undefined
cd "$build"
# Leaks are not reported: the JIT and the OpenCL platform keep what they allocate for the
# process's life by design. Everything else (overflows, use after free, UB) stops the test.
# The fault tests crash candidates on purpose: their signals stay the measure worker's.
# An allocation too large to make returns null, as malloc does, for the runtime to report
# (the out-of-memory tests ask for 2^62 bytes).
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:handle_segv=0:handle_abort=0:handle_sigbus=0:handle_sigfpe=0:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
ctest --output-on-failure -j"$(nproc)" --timeout 900 -L "unit|error" "$@"
