#!/usr/bin/env bash
# Fuzzes one of Temper's parsers with libFuzzer, under ASan and UBSan.
# Usage: scripts/fuzz.sh NAME SECONDS
#   NAME: a harness of fuzz/ (fuzz_NAME.cpp): onnx_import, workload, trace, npy, json_lines, plan, target
# Builds the fuzz programs once in ./build-fuzz (clang 19; BUILD_DIR overrides it), then runs
# fuzz_NAME for SECONDS on the seed corpus fuzz/corpus/NAME and what earlier runs found
# (build-fuzz/corpus/NAME), and prints libFuzzer's final counts (executions, coverage). An
# input that crashes, hangs or trips a sanitizer is saved as fuzz/regressions/NAME/crash-*
# (or timeout-*, oom-*): fix the bug and commit the file; the test suite replays every file
# there (ctest -R fuzz_replay).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if (($# != 2)) || [[ ! "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh NAME SECONDS" >&2
  exit 2
fi
name="$1"
seconds="$2"
if [[ ! -f "$root/fuzz/fuzz_$name.cpp" ]]; then
  names=$(cd "$root/fuzz" && ls fuzz_*.cpp | sed 's/^fuzz_//; s/\.cpp$//' | tr '\n' ' ')
  echo "scripts/fuzz.sh: no harness '$name'; the harnesses are: $names" >&2
  exit 2
fi
"$root/scripts/install-deps.sh" --fuzz
build="${BUILD_DIR:-$root/build-fuzz}"
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTEMPER_BUILD_TESTS=OFF \
    -DTEMPER_BUILD_FUZZERS=ON -DTEMPER_SANITIZE=address,undefined >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target "fuzz_$name"
found="$build/corpus/$name"
regressions="$root/fuzz/regressions/$name"
mkdir -p "$found" "$regressions"
# -timeout: an input that takes longer is a hang; -rss_limit_mb: one that takes more, a leak.
"$build/fuzz/fuzz_$name" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=4096 \
  -artifact_prefix="$regressions/" "$found" "$root/fuzz/corpus/$name"
