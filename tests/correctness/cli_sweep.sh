#!/usr/bin/env bash
# `temper sweep` end to end: a small suite (a matmul with oneDNN and OpenBLAS beside it,
# a small CNN tuned and a transformer block untuned, with onnxruntime) tuned where the log
# lacks trials, timed side by side and kept in the log's sweep_results; a second run tunes
# nothing; a baseline that cannot run here (the runner not built, no Python with
# onnxruntime, cuBLAS without a CUDA device) is recorded with why and the sweep goes on; a
# bad suite file is refused with its line and column before the log is touched. `temper
# report` then shows the results.
# Usage: cli_sweep.sh TEMPER
set -u
temper="$1"
here="$(cd "$(dirname "$0")" && pwd)"
expect_error="$here/../error/cli_expect_error.sh"
source "$here/cli_test_lib.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/temper_cli_sweep_XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
/usr/bin/python3 "$here/make_test_models.py" . >/dev/null || fail "make_test_models.py could not write the models"

cat >suite.toml <<'SUITE'
# a suite of one workload and one model
name = "small"
trials = 6
rounds = 3

[[workload]]
workload = "matmul:M=64,N=48,K=32"
baselines = ["onednn", "openblas"]

[[model]]
path = "cnn.onnx"
trials = 8
baselines = ["onnxruntime"]

[[model]]
path = "encoder.onnx"
trials = 0            # timed with the defaults only
SUITE
W=matmul:M=64,N=48,K=32,transpose_a=0,transpose_b=0,dtype=float32

run sweep suite.toml --db s.db --min-round-ms 5 --threads 1
expect '^sweep +small: 3 entries on llvm -mcpu=native, 1 threads, 3 interleaved rounds'
expect '^== matmul:M=64,N=48,K=32'
expect '^stopped +trial budget reached after 6 trials'
expect '^temper-tuned +[0-9.]+ +1 +[0-9.]+ +the log.s best record$'
expect '^temper-default +[0-9.]+ '
# The baselines: timed where the runner is built, else recorded with what to do.
expect '^onednn +([0-9.]+ .*oneDNN|- .*unavailable: .*(not built|libdnnl))'
expect '^openblas +([0-9.]+ .*OpenBLAS|- .*unavailable: )'
expect '^== cnn.onnx'
expect '^temper-tuned +[0-9.]+ +1 +- +[0-9]+ of [0-9]+ tunable ops from the log$'
expect '^onnxruntime +- .*unavailable: no Python with onnxruntime given: pass --onnxruntime-python'
expect '^== encoder.onnx'
expect '^temper-tuned +- .*unavailable: the log has no record of the model.s tasks on this machine'
expect '^temper-default +[0-9.]+ +- +- +template defaults$'
[[ $(count s.db "SELECT count(*) FROM sweep_results WHERE sweep = 'small'") == 9 ]] || fail "not 9 sweep results"
# The tuned CNN keeps its tasks and the log's estimate, for the report's model table.
/usr/bin/python3 - s.db <<'PY' || fail "the tuned CNN's result has no tasks and estimate"
import json, sqlite3, sys
details = json.loads(sqlite3.connect(sys.argv[1]).execute(
    "SELECT details FROM sweep_results WHERE entry = 'cnn.onnx' AND contender = 'temper-tuned'").fetchone()[0])
tasks = details["tasks"]
assert tasks and all(t["count"] >= 1 and t["workload"] for t in tasks), details
known = [t["best_ms"] * t["count"] for t in tasks if t["best_ms"] is not None]
assert details["estimated_ms"] is None or abs(details["estimated_ms"] - sum(known)) < 1e-9, details
PY
[[ $(count s.db "SELECT count(*) FROM sweep_results WHERE contender = 'temper-tuned' AND status = 'ok' AND seconds > 0 AND entry = '$W'") == 1 ]] ||
  fail "the tuned matmul's time is not in the log"
[[ $(count s.db "SELECT count(*) FROM sweep_results WHERE status = 'unavailable' AND why != ''") -ge 2 ]] ||
  fail "the unavailable contenders do not say why"
[[ $(count s.db "SELECT count(*) FROM machine_probes") == 1 ]] || fail "the sweep did not probe the machine"

# Again: the log has the trials, nothing is tuned, the results are added beside the first ones.
run sweep suite.toml --db s.db --min-round-ms 5 --threads 1
expect '^tuned +the log has [0-9]+ trials of it on this machine: no tuning'
expect_not '^stopped '
[[ $(count s.db "SELECT count(*) FROM sweep_results") == 18 ]] || fail "the second sweep's results are not kept beside the first's"

run report --db s.db -o s.html
grep -q '"sweeps":\[{"contenders":' s.html || fail "the page holds no sweep results"

# cuBLAS: timed beside a cuda target's kernels where this machine has a CUDA device and
# the runner is built; otherwise its column says why, and the sweep goes on.
cat >gpu.toml <<'SUITE'
name = "gpu"
trials = 0
rounds = 1

[[workload]]
workload = "matmul:M=64,N=48,K=32"
baselines = ["cublas"]
SUITE
run sweep gpu.toml --db s.db --min-round-ms 5 --threads 1
expect '^cublas +- .*unavailable: cuBLAS runs on a cuda target, not llvm'
if "$temper" devices | grep -Eq '^  cuda +cuda -arch=sm_[0-9]+ -device=0 '; then
  run sweep gpu.toml --db s.db --target cuda --min-round-ms 5
  expect '^cublas +([0-9.]+ .*cuBLAS [0-9.]+ sgemm on |- .*unavailable: .*not built)'
else
  # Temper's own cuda kernels fail here too, so the sweep exits 1: its output is what counts.
  out="$("$temper" sweep gpu.toml --db s.db --target cuda --min-round-ms 5 2>&1)"
  echo "$out"
  expect '^cublas +- .*unavailable: .*(not built|no CUDA device|libcuda)'
fi
[[ $(count s.db "SELECT count(*) FROM sweep_results WHERE sweep = 'gpu' AND contender = 'cublas'") == 2 ]] ||
  fail "the cuBLAS results were not kept"

# Refusals, before the log is touched.
before="$(md5sum <s.db)"
printf 'name = "bad"\n[[workload]]\nworkload = "matmul:M=4,N=4,K=4"\nbaselines = ["mkl"]\n' >unknown_baseline.toml
must_fail 'unknown_baseline.toml:4:14: unknown baseline .mkl.: the known baselines are onednn' sweep unknown_baseline.toml --db s.db
printf 'name = "bad"\n[[workload]]\nworkload = \n' >syntax.toml
must_fail 'syntax.toml:3:12: expected a value' sweep syntax.toml --db s.db
printf 'name = "bad"\n' >empty.toml
must_fail 'lists no \[\[workload\]\] or \[\[model\]\]' sweep empty.toml --db s.db
must_fail "cannot read suite file 'absent.toml'" sweep absent.toml --db s.db
must_fail 'missing --db FILE' sweep suite.toml
must_fail '--rounds must be at least 1' sweep suite.toml --db s.db --rounds 0
[[ $(md5sum <s.db) == "$before" ]] || fail "a refused sweep changed the log"
cp s.db future.db
printf '\x00\x00\x00\x63' | dd of=future.db bs=1 seek=60 conv=notrunc status=none
future_before="$(md5sum <future.db)"
must_fail 'future.db was written by a newer Temper' sweep suite.toml --db future.db
[[ $(md5sum <future.db) == "$future_before" ]] || fail "future.db was changed"
echo "PASS"
