#!/usr/bin/env bash
# Builds the benchmarks (installing oneDNN and OpenBLAS) and runs one of them.
# Usage: scripts/bench.sh [matmul_schedules]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh" -DTEMPER_BUILD_BENCHMARKS=ON
"${BUILD_DIR:-$root/build}/benchmarks/${1:-matmul_schedules}"
