#!/usr/bin/env bash
# Installs the Debian packages Temper needs, and only those that are missing.
# Usage: scripts/install-deps.sh [--bench | --fuzz]
#   --bench  also the libraries the benchmarks compare against (oneDNN, OpenBLAS, OpenCV's dnn module)
#            and what onnxruntime's venv needs (python3-venv).
#   --fuzz   also clang 19 with its runtimes (libFuzzer, the sanitizers) and OpenMP, for scripts/fuzz.sh.
set -euo pipefail

packages=(
  build-essential cmake
  llvm-19-dev            # codegen: LLVM IR, ORC JIT, object emission
  libgomp1               # GCC's OpenMP runtime (parallel loops)
  libboost-program-options-dev
  libgtest-dev
  libeigen3-dev          # fast reference in tests
  nlohmann-json3-dev     # traces and config as JSON
  libsqlite3-dev         # the tuning log
  libxgboost-dev         # the learned cost model (XGBoost's C API)
  libonnx-dev libprotobuf-dev protobuf-compiler  # the ONNX frontend (ONNX's protobuf classes need protobuf's
                         # headers; its CMake package may look for protoc)
  libonnx-testdata       # the ONNX backend node tests the conformance driver runs
  ocl-icd-opencl-dev opencl-headers  # the OpenCL target: the ICD loader and CL/cl.h
  pocl-opencl-icd        # an OpenCL platform on any CPU (PoCL), so the OpenCL target runs without a GPU
  python3-onnx python3-numpy  # tests/correctness/make_test_models.py writes the whole-model tests' models
  python3-torch python3-torchvision  # and exports the model zoo (make_test_models.py --zoo)
  libjs-chart.js         # temper report inlines Chart.js into its page
  chromium               # the report tests open the page in headless Chromium
  zlib1g-dev libzstd-dev libxml2-dev libedit-dev libffi-dev libtinfo-dev  # LLVM's link deps
)
if [[ "${1:-}" == "--bench" ]]; then
  # model_e2e's models come from torchvision; onnxruntime goes into a venv (python3-venv).
  packages+=(libdnnl-dev libopenblas-dev libopencv-dnn-dev python3-venv)
fi
if [[ "${1:-}" == "--fuzz" ]]; then
  packages+=(clang-19 libclang-rt-19-dev libomp-19-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
