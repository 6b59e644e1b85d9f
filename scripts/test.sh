#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (unit, correctness, error, device).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
"$root/scripts/build.sh" -DTEMPER_BUILD_TESTS=ON
cd "$build"
ctest --output-on-failure -j"$(nproc)" --timeout 300
