#!/usr/bin/env bash
# `temper tune MODEL.onnx`: the CNN of make_test_models.py has three tasks (two convs, the
# classifier's dense); --trials 16 is shared round-robin in batches of 4, the task table
# and summary are printed, and the log holds records of every task. A second run resumes:
# the log's trials count towards the budget, so it measures nothing. `temper build --db`
# and `temper run --db` apply the log to all three tasks. The encoder's
# projections and attention products are matmul and batch_matmul tasks. A model without a
# tunable node is refused.
# Usage: cli_tune_onnx.sh TEMPER
set -u
temper="$1"
here="$(cd "$(dirname "$0")" && pwd)"
expect_error="$here/../error/cli_expect_error.sh"
source "$here/cli_test_lib.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/temper_cli_tune_onnx_XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
/usr/bin/python3 "$here/make_test_models.py" . >/dev/null ||
  fail "make_test_models.py could not write the models (python3-onnx, python3-numpy)"
fast=(--min-repeat-ms 1 --repeat 2 --batch-size 4)
conv1="conv2d:N=1,C=3,H=32,W=32,K=8,R=3,S=3,stride=1,pad=1,dilation=1,groups=1,layout=NCHW,dtype=float32"
conv2="conv2d:N=1,C=8,H=16,W=16,K=16,R=3,S=3,stride=1,pad=1,dilation=1,groups=1,layout=NCHW,dtype=float32"
dense="dense:M=1,N=10,K=16,bias=1,act=none,dtype=float32"

echo "== the CNN's three tasks share 16 trials"
run tune cnn.onnx --db cnn.db --trials 16 --tuner random --seed 1 "${fast[@]}"
expect "^model +cnn.onnx: 9 nodes, 3 tasks$"
expect "^tuner +random, seed 1, 16 trials shared round-robin, 4 per turn$"
expect "^ +0 +1 +[0-9]+ +$conv1$"
expect "^ +1 +1 +[0-9]+ +$conv2$"
expect "^ +2 +1 +[0-9]+ +$dense$"
expect_not "^skipped"
# Turns of 4: tasks 0, 1, 2, then task 0 again.
expect "^task 2  trials 4 \(\+4\)  best [0-9.]+ GFLOP/s  total 12/16"
expect "^task 0  trials 8 \(\+4\)  best [0-9.]+ GFLOP/s  total 16/16"
expect "^stopped +trial budget reached after 16 trials in "
expect "^ +0 +8 +0 +[0-9.]+ ms, [0-9.]+ GFLOP/s$"
expect "^ +1 +4 +0 +[0-9.]+ ms, [0-9.]+ GFLOP/s$"
expect "^ +2 +4 +0 +[0-9.]+ ms, [0-9.]+ GFLOP/s$"
for w in "$conv1" "$conv2" "$dense"; do
  n=$(count cnn.db "select count(*) from records r join workloads w on r.workload_id = w.id where w.workload = '$w'")
  [[ "$n" -ge 4 ]] || fail "the log has $n records of $w, expected at least 4"
done
[[ $(count cnn.db "select count(*) from records") -eq 16 ]] || fail "the log does not hold exactly 16 records"

echo "== temper build applies the log's best to each task; the built model matches numpy"
run build cnn.onnx --db cnn.db -o cnn.so
expect "^schedules +3 of 3 tunable ops tuned from cnn.db \(0 with their template defaults\)$"
run run cnn.so --input x=cnn_input.npy --output-dir out --repeat 1
/usr/bin/python3 -c "
import numpy as np, sys
got, want = np.load('out/y.npy'), np.load('cnn_expected.npy')
sys.exit(0 if np.allclose(got, want, rtol=1e-4, atol=1e-5) else 1)" || fail "the tuned build's output does not match numpy"
run run cnn.onnx --db cnn.db --input x=cnn_input.npy --repeat 1
expect "^schedules +3 of 3 tunable ops tuned from cnn.db"

echo "== a second run resumes: the 16 trials in the log spend the budget"
run tune cnn.onnx --db cnn.db --trials 16 --tuner random --seed 1 "${fast[@]}"
expect "^stopped +trial budget reached after 16 trials in "
[[ $(count cnn.db "select count(*) from records") -eq 16 ]] || fail "the resumed run measured again"

echo "== the encoder: projections (matmul, M = batch x sequence) and attention (batch_matmul over the heads)"
run tune encoder.onnx --db enc.db --trials 16 --tuner random --seed 1 "${fast[@]}"
expect "^model +encoder.onnx: [0-9]+ nodes, 4 tasks$"
expect "^ +0 +4 +[0-9]+ +matmul:M=16,N=64,K=64,"
expect "^ +1 +2 +[0-9]+ +batch_matmul:B=4,M=16,N=16,K=16,"

echo "== a budget smaller than the task count: the untried tasks are named, and the job succeeds"
run tune encoder.onnx --db enc_small.db --trials 4 --tuner random --seed 1 "${fast[@]}"
expect "^ +1 +0 +0 +none \(no trials\)$"
expect "^warning: 3 of 4 tasks got no trials; builds use their template defaults \(give --trials 16 or more for 4 per task\)$"

echo "== refused"
/usr/bin/python3 -c '
import onnx
from onnx import TensorProto, helper
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "relu.onnx")' ||
  fail "could not write relu.onnx"
must_fail "relu.onnx has no node that a tuning template serves" tune relu.onnx --db relu.db --trials 4
must_fail "--early-stopping applies to one workload" tune cnn.onnx --db cnn.db --early-stopping 5
must_fail "--dim sizes a model's dynamic dimensions" tune matmul:M=4,N=4,K=4 --db cnn.db --dim batch=2
echo "PASS"
