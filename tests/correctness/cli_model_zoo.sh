#!/usr/bin/env bash
# The model zoo: torchvision CNNs, a ViT-tiny-like encoder and a small BERT with an
# attention mask, exported by torch.onnx (make_test_models.py --zoo, random weights).
# Each imports, runs with the template defaults on PyTorch's inputs, and matches
# PyTorch's outputs within 1e-3 relative to their largest magnitude; the dynamic batch
# (and sequence) dimensions are sized by the inputs' shapes; --shape gives a batch of 8 to
# a model exported at a static batch of 1. Then a batch of 8 tuned:
# `temper tune --dim batch=8` tunes the batch-8 tasks, and the build with that log
# matches PyTorch at batch 8.
# Usage: cli_model_zoo.sh TEMPER
set -u
temper="$1"
here="$(cd "$(dirname "$0")" && pwd)"
expect_error="$here/../error/cli_expect_error.sh"
source "$here/cli_test_lib.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/temper_cli_model_zoo_XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
py=/usr/bin/python3

$py "$here/make_test_models.py" --zoo . ||
  fail "make_test_models.py --zoo could not export the zoo (needs python3-torch, python3-torchvision)"

# match NAME GOT.npy EXPECTED.npy: the same shape and dtype, and the largest error within
# 1e-3 of the largest |expected|; prints the error for the table.
match() {
  $py - "$@" <<'EOF' || fail "$1: $2 does not match $3"
import sys
import numpy as np
name, got, expected = sys.argv[1], np.load(sys.argv[2]), np.load(sys.argv[3])
if got.dtype != expected.dtype or got.shape != expected.shape:
    sys.exit(f"got {got.dtype}{list(got.shape)}, expected {expected.dtype}{list(expected.shape)}")
scale = np.abs(expected.astype(np.float64)).max()
if not np.isfinite(got).all() or scale == 0:
    sys.exit("the output is not finite, or PyTorch's is all zeros (nothing to compare)")
error = np.abs(got.astype(np.float64) - expected).max() / scale
print(f"zoo {name:<20} {sys.argv[2]:<28} max error {error:.2e} of the largest |value| {scale:.3g}")
sys.exit(0 if error <= 1e-3 else 1)
EOF
}

# run_case LINE [temper run flags]: one zoo.txt line, run and matched.
run_case() {
  local name model inputs=() outputs=() item side=in
  read -r name model rest <<<"$1"
  shift
  for item in $rest; do
    if [[ $item == "->" ]]; then side=out; elif [[ $side == in ]]; then inputs+=(--input "$item"); else outputs+=("$item"); fi
  done
  run run "$model" "${inputs[@]}" --output-dir "out_$name" --repeat 1 "$@"
  expect "^model +$model: [0-9]+ nodes"
  for item in "${outputs[@]}"; do
    match "$name" "out_$name/${item%%=*}.npy" "${item#*=}"
  done
}

while read -r line; do
  [[ $line == *_b8\ * ]] && continue
  echo "== ${line%% *}"
  run_case "$line"
done <zoo.txt

echo "== the BERT's batch and sequence are sized by its inputs: a disagreeing mask is refused"
$py -c "import numpy as np; np.save('mask_3.npy', np.ones((3, 16), dtype=np.int64))"
must_fail "the dynamic dimension 'batch' is 2 in the data given for 'input_ids' \(axis 0\) but 3 in the data given for 'attention_mask' \(axis 0\)" \
  run bert_small.onnx --input input_ids=bert_small_input_ids.npy --input attention_mask=mask_3.npy
must_fail "the dynamic dimension 'batch' is given as 4 but 2 in the data given for 'input_ids'" \
  run bert_small.onnx --dim batch=4 --input input_ids=bert_small_input_ids.npy

# A full --shape binds the dynamic dimensions it covers for the other inputs too.
run run bert_small.onnx --shape input_ids=3x8 --repeat 1
expect "^input +attention_mask int64\[3,8\]: not given, random data"

echo "== batch 8: resnet18 with the defaults"
run_case "$(grep '^resnet18_b8 ' zoo.txt)"
expect "^input +x float32\[8,3,64,64\] from resnet18_b8_x.npy$"

echo "== batch 8 from a model exported at a static batch 1: --shape overrides the input's shape"
must_fail "input 'x' expects float32\[1,3,64,64\], the file holds float32\[8,3,64,64\] \(to compile the model for the file's shape, give --shape x=8x3x64x64\)" \
  run squeezenet1_1_static.onnx --input x=squeezenet1_1_b8_x.npy
run run squeezenet1_1_static.onnx --shape x=8x3x64x64 --input x=squeezenet1_1_b8_x.npy --output-dir out_static --repeat 1
expect "^input +x float32\[8,3,64,64\] from squeezenet1_1_b8_x.npy$"
match squeezenet1_1_static out_static/y.npy squeezenet1_1_b8_y.npy
run tune squeezenet1_1_static.onnx --shape x=8x3x64x64 --db static.db --trials 1
expect "conv2d_nchwc:N=8,C=3,H=64,W=64,K=64,R=3,S=3,stride=2"
must_fail "input 'x' is given the shape \[8, 3, 64\], but the model declares 4 dimensions" \
  run squeezenet1_1_static.onnx --shape x=8x3x64
must_fail "--shape x=8x3xax64: 'a' is not a positive size" run squeezenet1_1_static.onnx --shape x=8x3xax64

echo "== batch 8 tuned: temper tune --dim batch=8 tunes the batch-8 tasks, and the build with its log matches"
run tune squeezenet1_1.onnx --dim batch=8 --db zoo.db --trials 8
expect "conv2d_nchwc:N=8,C=3,H=64,W=64,K=64,R=3,S=3,stride=2"
expect_not "conv2d[a-z_]*:N=1,"
[[ $(count zoo.db "SELECT COUNT(*) FROM records JOIN workloads ON workloads.id = records.workload_id WHERE workload LIKE '%:N=8,%' AND mean IS NOT NULL") -ge 1 ]] ||
  fail "the log holds no batch-8 record"
run_case "$(grep '^squeezenet1_1_b8 ' zoo.txt)" --db zoo.db
expect "^input +x float32\[8,3,64,64\] from squeezenet1_1_b8_x.npy$"
echo "PASS"
