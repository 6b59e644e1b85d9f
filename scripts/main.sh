#!/usr/bin/env bash
# The main job: sets up, builds, tunes an fp32 1024^3 matmul for a short while (every
# measurement goes into ./tuning.db), then builds it applying the log and prints the
# tuned time next to the default schedule's.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh" -DTEMPER_BUILD_TESTS=OFF -DTEMPER_VERIFY_IR=OFF
temper="${BUILD_DIR:-$root/build}/cli/temper"
workload="matmul:M=1024,N=1024,K=1024"
db="${TEMPER_DB:-$root/tuning.db}"
"$temper" tune "$workload" --db "$db" --trials "${TRIALS:-24}" --tuner xgb --seed 0
"$temper" run "$workload" --db "$db"
