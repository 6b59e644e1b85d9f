#!/usr/bin/env bash
# The learned cost model from the command line: two workloads of one op tuned into a log,
# `temper model train` and `eval` on it (and on a log of the auto-scheduler's traces), a
# third workload tuned with --tuner xgb --transfer (and --save-model, whose file eval
# accepts, and --model), and the fallbacks: an empty log, a log of failures only, a model
# file of another feature layout.
# Usage: cli_model.sh TEMPER
set -u
temper="$1"
here="$(cd "$(dirname "$0")" && pwd)"
expect_error="$here/../error/cli_expect_error.sh"
source "$here/cli_test_lib.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/temper_cli_model_XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
# No re-measurements at the end (--confirm 0): each record is a trial, a sample of its own.
fast=(--min-repeat-ms 1 --repeat 1 --batch-size 8 --confirm 0)
py=/usr/bin/python3

echo "== two workloads of matmul tuned into one log"
run tune matmul:M=64,N=64,K=64 --db log.db --trials 16 --tuner random --seed 1 "${fast[@]}"
run tune matmul:M=96,N=96,K=96 --db log.db --trials 16 --tuner random --seed 2 "${fast[@]}"
[[ $(count log.db "select count(*) from records") == 32 ]] || fail "expected 32 records in the log"
failed=$(count log.db "select count(*) from records where error_kind != 'None'")

echo "== train and eval offline"
run model train --db log.db --out model.json --op matmul --rounds 50
expect "^samples +32 from 2 workloads of matmul \($failed failed, 0 skipped\)$"
expect "^trained +xgb, objective rank, 50 rounds"
[[ -s model.json ]] || fail "model train wrote no model.json"
run model eval --db log.db --model model.json
expect "^model +model.json \(xgb, trained on 32 samples\)$"
expect "^matmul:M=64,N=64,K=64[^ ]* +16 +[0-9]+ +(0|1)\.[0-9]{3} +(0|1)\.[0-9]{3}$"
expect "^overall +32 +[0-9]+ +(0|1)\.[0-9]{3} +(0|1)\.[0-9]{3}$"

must_fail "no tuning log at missing.db" model eval --db missing.db --model model.json
[[ ! -e missing.db ]] || fail "model eval created the missing log"
must_fail "the log log.db has no records of matmul on 'llvm -mcpu=haswell'; it has records of it on: 'llvm -mcpu=native'" \
  model eval --db log.db --model model.json --op matmul --target "llvm -mcpu=haswell"

echo "== a third workload tuned by the xgb tuner, pre-trained on the other two"
run tune matmul:M=80,N=80,K=80 --db log.db --trials 16 --tuner xgb --transfer --seed 3 --save-model tuned.json \
  "${fast[@]}"
expect "^model +transfer: 32 samples from 2 workloads \(0 skipped\)"
expect "^measured +16 trials"
expect "^model +saved to tuned.json \(48 samples\)"
run model eval --db log.db --model tuned.json --op matmul --top-k 3
expect "^overall +48 "

echo "== a saved model seeds another run"
run tune matmul:M=80,N=80,K=80 --db log.db --trials 20 --tuner xgb --model model.json --seed 4 "${fast[@]}"
expect "^model +loaded from model.json \(trained on 32 samples\)$"
expect "^resumed +16 trials"
expect "^measured +4 trials"

echo "== transfer from an empty log falls back to an untrained model"
run tune matmul:M=32,N=32,K=32 --db empty.db --trials 4 --tuner xgb --transfer "${fast[@]}"
expect "^model +transfer: the log has 0 usable records of matmul on '.*' for other workloads; transfer needs at least 16; starting with an untrained model$"
expect "^measured +4 trials"

echo "== a log of failures only"
run db export --db log.db -o all.jsonl
"$py" - <<'EOF' || fail "could not write failed.jsonl"
import json
with open("all.jsonl") as src, open("failed.jsonl", "w") as dst:
    for line in src:
        r = json.loads(line)
        if r["workload"]["workload"].startswith("matmul:M=80,"):
            continue
        r.update(error="RuntimeError", error_message="it crashed", mean=None, costs=[])
        dst.write(json.dumps(r) + "\n")
EOF
run db import --db failed.db failed.jsonl
must_fail "all 32 records of matmul on '.*' in failed.db failed: nothing to learn from" model train --db failed.db \
  --out never.json --op matmul
[[ ! -e never.json ]] || fail "model train wrote a model from failures only"
run tune matmul:M=80,N=80,K=80 --db failed.db --trials 4 --tuner xgb --transfer "${fast[@]}"
expect "^model +transfer: all 32 records of matmul on '.*' for other workloads failed: nothing to learn from; starting with an untrained model$"

echo "== records this Temper's templates no longer take are skipped and counted"
"$py" - <<'EOF' || fail "could not write stale.jsonl"
import json
with open("all.jsonl") as src, open("stale.jsonl", "w") as dst:
    changed = 0
    for line in src:
        r = json.loads(line)
        w = r["workload"]["workload"]
        if not w.startswith(("matmul:M=64,", "matmul:M=96,")):
            continue
        if w.startswith("matmul:M=64,") and 0 < changed < 3:
            r["workload"]["workload"] = "matmul:M=64,N=64,K=64,Q=1"  # a workload that no longer parses
        changed += w.startswith("matmul:M=64,")
        dst.write(json.dumps(r) + "\n")
EOF
run db import --db stale.db stale.jsonl
# A config naming a choice the knob does not have: import refuses such a record, so the
# log is changed underneath, as a template change between versions would leave it.
"$py" - stale.db <<'EOF' || fail "could not change a config in stale.db"
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
id, config = c.execute("SELECT r.id, r.config FROM records r JOIN workloads w ON r.workload_id = w.id "
                       "WHERE w.workload LIKE 'matmul:M=64,N=64,K=64,%' AND r.config IS NOT NULL ORDER BY r.id").fetchone()
config = json.loads(config)
config["knobs"]["mr"] = 999
c.execute("UPDATE records SET config = ? WHERE id = ?", (json.dumps(config), id))
c.commit()
EOF
run model train --db stale.db --out stale.json --rounds 20
expect "^samples +29 from 2 workloads of matmul \($failed failed, 3 skipped\)$"

echo "== the auto-scheduler's records (traces) train a model too, also of an op without a template"
run tune softmax:shape=8x64,axis=1 --db auto.db --trials 8 --space auto --seed 1 "${fast[@]}"
auto_failed=$(count auto.db "select count(*) from records where error_kind != 'None'")
run model train --db auto.db --out auto.json --op softmax --rounds 20
expect "^samples +8 from 1 workload of softmax \($auto_failed failed, 0 skipped\)$"
run model eval --db auto.db --model auto.json
expect "^overall +8 "

echo "== a model file of another feature layout is refused"
"$py" - <<'EOF' || fail "could not write other_layout.json"
import json
m = json.load(open("model.json"))
layout = m["feature_layout"]
m["feature_layout"] = layout + 1
json.dump(m, open("other_layout.json", "w"))
EOF
must_fail "other_layout.json.*layout.*temper model train" model eval --db log.db --model other_layout.json
must_fail "other_layout.json.*layout" tune matmul:M=80,N=80,K=80 --db log.db --tuner xgb --model other_layout.json

echo "PASS"
