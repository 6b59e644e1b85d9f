#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (unit, correctness, error, device).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
# The IR verifier runs after every lowering pass in the tests.
"$root/scripts/build.sh" -DTEMPER_BUILD_TESTS=ON -DTEMPER_VERIFY_IR=ON
cd "$build"
ctest --output-on-failure -j"$(nproc)" --timeout 300
