#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (unit, correctness, error, device), then
# the error tests and the unit tests of the log, the parsers and the measurer again under
# AddressSanitizer and UndefinedBehaviorSanitizer (scripts/sanitize.sh --subset, in
# ./build-asan). SKIP_SANITIZERS=1 leaves that second part out.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
# The IR verifier runs after every lowering pass in the tests.
"$root/scripts/build.sh" -DTEMPER_BUILD_TESTS=ON -DTEMPER_VERIFY_IR=ON
(cd "$build" && ctest --output-on-failure -j"$(nproc)" --timeout 300)
if [[ "${SKIP_SANITIZERS:-0}" != 1 ]]; then
  BUILD_DIR="$root/build-asan" "$root/scripts/sanitize.sh" --subset
fi
