#!/usr/bin/env bash
# Builds the benchmarks (installing oneDNN and OpenBLAS) and runs one of them.
# Usage: scripts/bench.sh [matmul_schedules|tune_matmul|conv_templates|cost_model] [options of that benchmark]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh" -DTEMPER_BUILD_BENCHMARKS=ON
bench="${1:-matmul_schedules}"
shift || true
"${BUILD_DIR:-$root/build}/benchmarks/$bench" "$@"
