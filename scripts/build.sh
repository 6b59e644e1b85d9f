#!/usr/bin/env bash
# Installs what is missing, then configures and builds Temper in ./build.
# Usage: scripts/build.sh [extra cmake -D options...]; BUILD_DIR overrides ./build, and
# BUILD_TARGETS (space-separated) builds those targets only.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
bench=""
for arg in "$@"; do
  [[ "$arg" == "-DTEMPER_BUILD_BENCHMARKS=ON" ]] && bench="--bench"
done
"$root/scripts/install-deps.sh" $bench
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j"$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
