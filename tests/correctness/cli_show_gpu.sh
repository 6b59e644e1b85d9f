#!/usr/bin/env bash
# `temper show --emit` for GPU targets: a tiled matmul (its schedule given as a trace, so
# that the test does not depend on the GPU templates) printed as OpenCL C, CUDA C and PTX;
# the CPU stages refused on a GPU target and the GPU stages on a CPU one, naming what fits.
# Usage: cli_show_gpu.sh TEMPER
set -u
temper="$1"
here="$(cd "$(dirname "$0")" && pwd)"
expect_error="$here/../error/cli_expect_error.sh"
source "$here/cli_test_lib.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/temper_cli_show_gpu_XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

W=matmul:M=64,N=64,K=64
# 8x8 threads per block, a 4x4 tile of C per thread, A and B staged in shared memory per
# k-tile of 8 (tests/device/test_measure_gpu.cpp's gpu_matmul).
cat >trace.json <<'JSON'
{"instructions":[{"attrs":["matmul"],"inputs":[],"kind":"GetBlock","outputs":["b0"]},{"attrs":[1,"shared"],"inputs":["b0"],"kind":"CacheRead","outputs":["b1"]},{"attrs":[2,"shared"],"inputs":["b0"],"kind":"CacheRead","outputs":["b2"]},{"attrs":[0,"local"],"inputs":["b0"],"kind":"CacheWrite","outputs":["b3"]},{"attrs":[],"inputs":["b0"],"kind":"GetLoops","outputs":["l4","l5","l6"]},{"attrs":[true],"inputs":["l4",null,8,4],"kind":"Split","outputs":["l7","l8","l9"]},{"attrs":[true],"inputs":["l5",null,8,4],"kind":"Split","outputs":["l10","l11","l12"]},{"attrs":[true],"inputs":["l6",null,8],"kind":"Split","outputs":["l13","l14"]},{"attrs":[],"inputs":["l7","l10","l8","l11","l13","l14","l9","l12"],"kind":"Reorder","outputs":[]},{"attrs":["blockIdx.y"],"inputs":["l7"],"kind":"Bind","outputs":[]},{"attrs":["blockIdx.x"],"inputs":["l10"],"kind":"Bind","outputs":[]},{"attrs":["threadIdx.y"],"inputs":["l8"],"kind":"Bind","outputs":[]},{"attrs":["threadIdx.x"],"inputs":["l11"],"kind":"Bind","outputs":[]},{"attrs":[],"inputs":["b3","l11"],"kind":"ReverseComputeAt","outputs":[]},{"attrs":[],"inputs":["b1","l13"],"kind":"ComputeAt","outputs":[]},{"attrs":[],"inputs":["b1"],"kind":"GetLoops","outputs":["l15","l16","l17","l18","l19","l20","l21"]},{"attrs":[],"inputs":["l20","l21"],"kind":"Fuse","outputs":["l22"]},{"attrs":[true],"inputs":["l22",null,8,8],"kind":"Split","outputs":["l23","l24","l25"]},{"attrs":["threadIdx.y"],"inputs":["l24"],"kind":"Bind","outputs":[]},{"attrs":["threadIdx.x"],"inputs":["l25"],"kind":"Bind","outputs":[]},{"attrs":[],"inputs":["b2","l13"],"kind":"ComputeAt","outputs":[]},{"attrs":[],"inputs":["b2"],"kind":"GetLoops","outputs":["l26","l27","l28","l29","l30","l31","l32"]},{"attrs":[],"inputs":["l31","l32"],"kind":"Fuse","outputs":["l33"]},{"attrs":[true],"inputs":["l33",null,8,8],"kind":"Split","outputs":["l34","l35","l36"]},{"attrs":["threadIdx.y"],"inputs":["l35"],"kind":"Bind","outputs":[]},{"attrs":["threadIdx.x"],"inputs":["l36"],"kind":"Bind","outputs":[]}],"version":1}
JSON

echo "== OpenCL C"
run show "$W" --trace trace.json --target opencl --emit opencl
expect '^__kernel .*void matmul_kernel0\('
expect 'barrier\(CLK_LOCAL_MEM_FENCE\)'
expect '__local float'

echo "== CUDA C"
run show "$W" --trace trace.json --target "cuda -arch=sm_90" --emit cuda
expect '__global__ .*void .*matmul_kernel0\('
expect '__syncthreads\(\)'
expect '__shared__ float'

echo "== PTX"
out="$("$temper" show "$W" --trace trace.json --target "cuda -arch=sm_90" --emit ptx 2>&1)"
if grep -q "NVRTC (libnvrtc.so) not found" <<<"$out"; then
  echo "SKIP: no NVRTC: $out"
else
  echo "$out" | head -20
  expect '^\.target sm_90'
  expect '^\.visible \.entry matmul_kernel0\('
fi

echo "== stages that do not fit the target"
must_fail "--emit llvm does not fit target 'opencl': use ir, lowered, opencl" \
  show "$W" --trace trace.json --target opencl --emit llvm
must_fail "--emit asm does not fit target 'cuda -arch=sm_90': use ir, lowered, cuda or ptx" \
  show "$W" --trace trace.json --target "cuda -arch=sm_90" --emit asm
must_fail "--emit opencl does not fit target 'cuda -arch=sm_90': use --emit cuda or ptx" \
  show "$W" --trace trace.json --target "cuda -arch=sm_90" --emit opencl
must_fail "--emit ptx needs a cuda target" show "$W" --trace trace.json --target opencl --emit ptx
must_fail "target 'llvm' is not a GPU target" show "$W" --target llvm --emit cuda
echo "PASS"
