#!/usr/bin/env bash
# temper devices: lists the CPU targets (llvm with the host CPU, c), the OpenCL devices
# (PoCL's CPU device at least, on the test machines), and for cuda either its devices or
# why it cannot run; --json says the same as JSON.
# Usage: cli_devices.sh TEMPER
set -u
temper="$1"
here="$(cd "$(dirname "$0")" && pwd)"
expect_error="$here/../error/cli_expect_error.sh"
source "$here/cli_test_lib.sh"

echo "== text"
run devices
expect "^Targets this machine can run:$"
expect "^  llvm +llvm -mcpu=native +host CPU [a-z0-9_-]+, [0-9]+ cores$"
expect "^  c +c +host CPU, compiled by /.*cc$"
expect "^  opencl +opencl -device=0 +.+ \(OpenCL [0-9.]+.*\), [0-9]+ compute units, max work-group [0-9]+, local memory [0-9.]+ [KMG]iB$"
if grep -Eq "^  cuda +cuda -arch=sm_[0-9]+ -device=0 " <<<"$out"; then
  echo "(a CUDA device is present)"
else
  expect "^Targets it cannot run:$"
  expect "^  cuda +(libcuda.so.1 not found \(no NVIDIA driver\): install the NVIDIA driver|no CUDA device: )"
fi

echo "== json"
run devices --json
/usr/bin/python3 - "$out" <<'PY' || fail "temper devices --json is not what it should be"
import json, sys
kinds = {k["kind"]: k for k in json.loads(sys.argv[1])["targets"]}
assert list(kinds) == ["llvm", "c", "cuda", "opencl"], list(kinds)
assert kinds["llvm"]["available"] and kinds["llvm"]["devices"][0]["cores"] > 0
opencl = kinds["opencl"]
assert opencl["available"] and opencl["devices"][0]["target"] == "opencl -device=0", opencl
assert opencl["devices"][0]["max_threads_per_block"] > 0 and opencl["devices"][0]["fingerprint"], opencl
cuda = kinds["cuda"]
assert cuda["available"] or "reason" in cuda and cuda["reason"], cuda
PY

must_fail "unexpected argument 'gpu'" devices gpu
echo "PASS"
