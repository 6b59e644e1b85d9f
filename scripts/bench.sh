#!/usr/bin/env bash
# Builds the benchmarks (installing oneDNN, OpenBLAS and OpenCV's dnn module) and runs one of them.
# Usage: scripts/bench.sh [matmul_schedules|tune_matmul|conv_templates|row_ops|cost_model|model_e2e|gpu_matmul] [options of that benchmark]
#        scripts/bench.sh sweep [SUITE.toml] [options of temper sweep]
#
# sweep runs `temper sweep` on a suite (default benchmarks/suites/cpu_core.toml; for
# models.toml it writes the models and makes the onnxruntime venv first) into
# bench_logs/sweep.db, with its baselines' runner (temper-baseline) built, and writes the
# report page bench_logs/sweep.html.
#
# model_e2e runs end to end: writes the models into bench_logs/models/ (scripts/make_bench_models.py:
# ResNet-18, MobileNetV2, ResNet-50 from torchvision, a BERT-base encoder layer, a 4-layer encoder
# and a 6-layer BERT-family model with an attention mask exported from PyTorch),
# makes a venv bench_logs/venv with onnxruntime from PyPI (the baseline; never a dependency of the
# build), tunes each model with `temper tune MODEL.onnx` into bench_logs/model_e2e.db, then times
# Temper (default schedules and the log's) against onnxruntime and OpenCV. Its settings, from the
# environment:
#   MODEL_E2E_MODELS       the models, comma-separated (default resnet18,mobilenet_v2,resnet50,bert_layer,
#                          bert_encoder,bert_masked)
#   MODEL_E2E_TRIALS       trials per model, shared by its tasks (default 1000; 0: no tuning, no --db)
#   MODEL_E2E_TIME_BUDGET  at most this long tuning each model (default 30m)
#   MODEL_E2E_SPACE        temper tune's --space: template (default), auto or both
#   MODEL_E2E_SCHEDULER    temper tune's --task-scheduler: gradient (default) or round-robin
#   MODEL_E2E_SIZE         the CNNs' input size (default 224)
#   MODEL_E2E_LAYERS, MODEL_E2E_SEQ   bert_encoder's layers and the sequence length (default 4 and 128)
# The log is appended to: a rerun resumes it (its trials count towards the budget), and
# remove bench_logs/model_e2e.db to tune afresh.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
"$root/scripts/build.sh" -DTEMPER_BUILD_BENCHMARKS=ON
bench="${1:-matmul_schedules}"
shift || true

logs="$root/bench_logs"
make_onnxruntime_venv() {
  venv="$logs/venv"
  if ! "$venv/bin/python" -c 'import onnxruntime' 2>/dev/null; then
    echo "bench.sh: installing onnxruntime from PyPI into $venv (the baseline; not needed by the build)"
    /usr/bin/python3 -m venv --system-site-packages "$venv"
    "$venv/bin/pip" install -q onnxruntime
  fi
}

if [[ "$bench" == sweep ]]; then
  suite="$root/benchmarks/suites/cpu_core.toml"
  if [[ $# -gt 0 && "$1" == *.toml ]]; then
    suite="$1"
    shift
  fi
  mkdir -p "$logs"
  extra=()
  if grep -q '^\[\[model\]\]' "$suite"; then
    /usr/bin/python3 "$root/scripts/make_bench_models.py" "$logs/models" --only resnet18,mobilenet_v2,resnet50
    make_onnxruntime_venv
    extra=(--onnxruntime-python "$logs/venv/bin/python")
  fi
  exec "$build/cli/temper" sweep "$suite" --db "$logs/sweep.db" --report "$logs/sweep.html" "${extra[@]}" "$@"
fi

# gpu_matmul: tunes matmul for opencl and the CPU (and cuda where there is a device), one
# target after the other, into bench_logs/gpu_matmul.db (GPU_MATMUL_TRIALS per target,
# default 48; the log is appended to, so a rerun resumes), then times them side by side.
if [[ "$bench" == gpu_matmul ]]; then
  mkdir -p "$logs"
  db="$logs/gpu_matmul.db"
  trials="${GPU_MATMUL_TRIALS:-48}"
  targets=("opencl" "llvm -mcpu=native")
  if "$build/cli/temper" devices --json | /usr/bin/python3 -c \
    'import json,sys; sys.exit(0 if any(k["kind"] == "cuda" and k["available"] for k in json.load(sys.stdin)["targets"]) else 1)'; then
    targets+=("cuda")
  fi
  for target in "${targets[@]}"; do
    size=1024
    [[ "$target" == cuda ]] && size=4096
    echo "bench.sh: tuning matmul ${size}^3 for '$target' ($trials trials; output in $logs/gpu_matmul_tune.log)"
    "$build/cli/temper" tune "matmul:M=$size,N=$size,K=$size" --target "$target" --db "$db" --trials "$trials" \
      >>"$logs/gpu_matmul_tune.log" 2>&1
    grep -E '^(measured|best) ' "$logs/gpu_matmul_tune.log" | tail -2
  done
  "$build/benchmarks/gpu_matmul" --db "$db" "$@"
  exit
fi

if [[ "$bench" != model_e2e ]]; then
  "$build/benchmarks/$bench" "$@"
  exit
fi

if [[ ! -x "$build/benchmarks/model_e2e" ]]; then
  echo "bench.sh: $build/benchmarks/model_e2e was not built (is libopencv-dnn-dev installed?)" >&2
  exit 1
fi
models="$logs/models"
db="$logs/model_e2e.db"
trials="${MODEL_E2E_TRIALS:-1000}"
time_budget="${MODEL_E2E_TIME_BUDGET:-30m}"
space="${MODEL_E2E_SPACE:-template}"
scheduler="${MODEL_E2E_SCHEDULER:-gradient}"
model_list="${MODEL_E2E_MODELS:-resnet18,mobilenet_v2,resnet50,bert_layer,bert_encoder,bert_masked}"
rm -f "$models"/*.onnx  # only the models asked for are timed
/usr/bin/python3 "$root/scripts/make_bench_models.py" "$models" --size "${MODEL_E2E_SIZE:-224}" \
  --layers "${MODEL_E2E_LAYERS:-4}" --seq "${MODEL_E2E_SEQ:-128}" --only "$model_list"
make_onnxruntime_venv

db_flag=()
if ((trials > 0)); then
  budget_lines=()
  IFS=, read -ra model_names <<<"$model_list"
  for model in "${model_names[@]}"; do
    tune_log="$logs/model_e2e_tune_$model.log"
    echo "bench.sh: tuning $model ($trials trials, at most $time_budget; output in $tune_log)"
    # A task whose every trial failed makes temper tune exit 1; the other tasks' figures
    # still count, so only a run that never finished fails here.
    status=0
    "$build/cli/temper" tune "$models/$model.onnx" --db "$db" --trials "$trials" --time-budget "$time_budget" \
      --space "$space" --task-scheduler "$scheduler" >"$tune_log" 2>&1 || status=$?
    stopped="$(grep '^stopped' "$tune_log" || true)"
    if [[ -z "$stopped" ]]; then
      tail -20 "$tune_log" >&2
      echo "bench.sh: tuning $model failed (exit status $status)" >&2
      exit 1
    fi
    tasks="$(grep -o '[0-9]* tasks' "$tune_log" | head -1)"
    latency="$(grep '^latency' "$tune_log" | sed 's/^latency *//; s/ estimated.*//' || true)"
    budget_lines+=("  $model: $tasks; ${stopped#stopped    }; estimated latency ${latency:-?}")
  done
  echo "tuning budget (temper tune, xgb tuner, --space $space, $trials trials per model shared by its tasks" \
    "($scheduler task scheduler), at most $time_budget each; log $db):"
  printf '%s\n' "${budget_lines[@]}"
  db_flag=(--db "$db")
fi
"$build/benchmarks/model_e2e" --models-dir "$models" --onnxruntime-python "$venv/bin/python" "${db_flag[@]}" "$@"
