#!/usr/bin/env bash
# The main job: sets up, builds, then compiles an fp32 1024^3 matmul with Temper's
# expert CPU schedule and prints its GFLOP/s next to the naive schedule's.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh" -DTEMPER_BUILD_TESTS=OFF -DTEMPER_VERIFY_IR=OFF
"${BUILD_DIR:-$root/build}/cli/temper" run "matmul:M=1024,N=1024,K=1024" --schedule default --compare-naive
