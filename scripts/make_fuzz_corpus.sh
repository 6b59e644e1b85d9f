#!/usr/bin/env bash
# Writes the fuzz harnesses' seed corpus (fuzz/corpus/NAME/) from what Temper itself reads
# and writes: workload and target strings, a schedule trace, .npy files, exported tuning
# records, small ONNX models and the plan and weights of one built. Needs a build (./build)
# and Debian's python3-onnx and python3-numpy.
# Usage: scripts/make_fuzz_corpus.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
temper="$root/build/cli/temper"
corpus="$root/fuzz/corpus"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$corpus"/{workload,target,trace,npy,json_lines,onnx_import,plan}

i=0
for w in "matmul:M=64,N=48,K=32" "batch_matmul:B=2,M=8,N=8,K=8" "dense:M=1,N=10,K=512" \
  "conv2d:N=1,C=3,H=32,W=32,K=16,R=3,S=3,stride=1,pad=1" "depthwise_conv2d:N=1,C=8,H=10,W=10,R=3,S=3,pad=1" \
  "max_pool2d:N=1,C=4,H=9,W=9,kernel=3,stride=2,pad=1" "softmax:shape=12x128x128" "layer_norm:shape=128x768" \
  "transpose:shape=4x6x8,perm=2x0x1" "concat:shape=4x10,axis=1,sizes=4x6" "add:shape=16x16" "gelu:shape=64"; do
  printf '%s' "$w" >"$corpus/workload/seed$((i++))"
done
i=0
for t in "llvm -mcpu=native" "llvm" "c" "llvm -mcpu=znver4 -mattr=+avx512f,-avx2 -num-cores=2" \
  "cuda -arch=sm_90 -device=1" "opencl -device=0 -max_threads_per_block=256"; do
  printf '%s' "$t" >"$corpus/target/seed$((i++))"
done
"$temper" run matmul:M=16,N=16,K=16 --repeat 1 --min-repeat-ms 1 --save-trace "$corpus/trace/default_matmul.json" >/dev/null
"$temper" tune matmul:M=8,N=8,K=8 --db "$work/log.db" --trials 4 --tuner random >/dev/null
"$temper" db export --db "$work/log.db" -o "$corpus/json_lines/tuned_matmul.jsonl" >/dev/null
/usr/bin/python3 - "$corpus" "$work" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
corpus, work = sys.argv[1], sys.argv[2]
np.save(f"{corpus}/npy/f32.npy", np.arange(12, dtype=np.float32).reshape(3, 4))
np.save(f"{corpus}/npy/i64.npy", np.array([1, -2, 3], dtype=np.int64))
np.save(f"{corpus}/npy/bool.npy", np.array([[True, False]]))
np.save(f"{corpus}/npy/scalar.npy", np.float64(2.5))
# conv -> relu -> global pool -> flatten -> gemm: the CNN path
w = numpy_helper.from_array(np.random.RandomState(0).randn(8, 3, 3, 3).astype(np.float32), "w")
b = numpy_helper.from_array(np.zeros(8, np.float32), "b")
fc = numpy_helper.from_array(np.random.RandomState(1).randn(4, 8).astype(np.float32), "fc")
g = helper.make_graph(
    [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
     helper.make_node("Relu", ["c"], ["r"]),
     helper.make_node("GlobalAveragePool", ["r"], ["p"]),
     helper.make_node("Flatten", ["p"], ["f"]),
     helper.make_node("Gemm", ["f", "fc"], ["y"], transB=1)],
    "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [w, b, fc])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{work}/cnn.onnx")
# matmul -> add -> softmax, with a dynamic batch
m = numpy_helper.from_array(np.random.RandomState(2).randn(16, 16).astype(np.float32), "m")
g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "m"], ["a"]), helper.make_node("Add", ["a", "x"], ["s"]),
     helper.make_node("Softmax", ["s"], ["y"], axis=-1)],
    "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 16])], [m])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{work}/mlp.onnx")
PY
cp "$work/cnn.onnx" "$work/mlp.onnx" "$corpus/onnx_import/"
"$temper" build "$work/cnn.onnx" -o "$work/cnn.so" >/dev/null
{ cat "$work/cnn.plan.json"; printf '\0'; cat "$work/cnn.weights"; } >"$corpus/plan/cnn"
echo "wrote $(find "$corpus" -type f | wc -l) seeds under $corpus"
