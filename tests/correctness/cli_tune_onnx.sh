#!/usr/bin/env bash
# `temper tune MODEL.onnx`: the CNN of make_test_models.py has three tasks (two convs, the
# classifier's dense) in the target's block; --trials 16 is shared round-robin in batches of
# 4, the task table and summary are printed, and the log holds records of every task. A second run resumes:
# the log's trials count towards the budget, so it measures nothing. `temper build --db`
# and `temper run --db` apply the log to all three tasks. With --space both each task is
# tuned by its template and by the auto-scheduler, the gradient task scheduler giving the
# turns, and the build applies whichever found the faster schedule. With the block left
# open the tasks are those of both blocks (8 and 16 lanes), and the build takes the block
# the log estimates fastest. The encoder's
# projections are matmul tasks and its attention one fused attention task. A model without a
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
# The convs in the target's blocked layout, whose block (16 lanes with AVX-512, 8 with
# AVX2) is this machine's: the stem reads the plain image (in_block=1); the 3x3 conv on
# the 16x16 map has the tiles for Winograd's F(2x2, 3x3).
conv1="conv2d_nchwc:N=1,C=3,H=32,W=32,K=8,R=3,S=3,stride=1,pad=1,dilation=1,in_block=1,out_block=[0-9]+,dtype=float32"
conv2="conv2d_winograd_nchwc:N=1,C=8,H=16,W=16,K=16,pad=1,block=[0-9]+,tile=2,dtype=float32"
dense="dense:M=1,N=10,K=16,bias=1,act=none,dtype=float32"
like() { sed -e 's/\[0-9\]+/%/g' <<<"$1"; }  # the regex as an SQL LIKE pattern
# The target's block, fixed: one way of laying out the model, three tasks.
run run cnn.onnx --repeat 1
block=$(sed -n 's/^layout  *activations in NCHW\([0-9]*\)c between convs.*/\1/p' <<<"$out")
[[ -n "$block" ]] || fail "temper run did not say the model's block"
fixed=(--layout "nchw${block}c")

echo "== the CNN's three tasks share 16 trials"
run tune cnn.onnx --db cnn.db --trials 16 --tuner random --seed 1 --task-scheduler round-robin "${fixed[@]}" "${fast[@]}"
expect "^model +cnn.onnx: 9 nodes, 3 tasks$"
expect "^tuner +random, seed 1, 16 trials shared round-robin, 4 per turn$"
expect "^ +0 +1 +template +[0-9]+ configs +$conv1$"
expect "^ +1 +1 +template +[0-9]+ configs +$conv2$"
expect "^ +2 +1 +template +[0-9]+ configs +$dense$"
expect_not "^skipped"
# Turns of 4: tasks 0, 1, 2, then task 0 again; the end-to-end estimate once all have a best.
expect "^task 1 \[template\] +trials 4 \(\+4\)  best [0-9.]+ GFLOP/s  total 8/16  latency \?"
expect "^task 2 \[template\] +trials 4 \(\+4\)  best [0-9.]+ GFLOP/s  total 12/16  latency [0-9.]+ ms"
expect "^task 0 \[template\] +trials 8 \(\+4\)  best [0-9.]+ GFLOP/s  total 16/16"
expect "^stopped +trial budget reached after 16 trials in "
expect "^ +0 +template +8 +0 +[0-9.]+ ms, [0-9.]+ GFLOP/s$"
expect "^ +1 +template +4 +0 +[0-9.]+ ms, [0-9.]+ GFLOP/s$"
expect "^ +2 +template +4 +0 +[0-9.]+ ms, [0-9.]+ GFLOP/s$"
expect "^latency +[0-9.]+ ms estimated: the tasks' best times weighted by how often the model runs them$"
for w in "$conv1" "$conv2" "$dense"; do
  n=$(count cnn.db "select count(*) from records r join workloads w on r.workload_id = w.id where w.workload like '$(like "$w")'")
  [[ "$n" -ge 4 ]] || fail "the log has $n records of $w, expected at least 4"
done
# Then each job's 3 best schedules are measured again until each has 3 times.
again=$(sed -n "s/^confirmed  each job's 3 best schedules: \([0-9]*\) more measurements.*/\1/p" <<<"$out")
(( ${again:-0} >= 18 )) || fail "expected each task's 3 best schedules measured again (at least 18 records)"
logged=$(count cnn.db "select count(*) from records")
[[ $logged -eq $((16 + again)) ]] || fail "the log holds $logged records, not the 16 trials and $again re-measurements"
[[ $(count cnn.db "select count(distinct workload_id || config) from records") -eq 16 ]] ||
  fail "a re-measurement is not of a trial's config"
# Last, each task's best schedules and its default timed inside builds of the model, and
# one choice per task kept in the log, each naming a candidate that ran there.
expect "^in model +6 builds \(the log's 5 best per task, the defaults\), 30 rounds of [0-9]+ runs each$"
expect "^in model +(in-model choices|the log's best|the template defaults) kept \([0-3] of 3 tasks take another schedule than the log's best\): the model ran [0-9.]+ ms with them, [0-9.]+ ms with the log's best, [0-9.]+ ms with the defaults"
[[ $(count cnn.db "select count(*) from model_choices where model = 'cnn.onnx'") -eq 3 ]] ||
  fail "the log does not hold one in-model choice per task"
[[ $(count cnn.db "select count(*) from model_choices where picked not in ('log rank 1', 'log rank 2', 'log rank 3', 'log rank 4', 'log rank 5', 'template default')") -eq 0 ]] ||
  fail "an in-model choice names no candidate that ran"

echo "== temper build applies the log's best to each task; the built model matches numpy"
run build cnn.onnx --db cnn.db -o cnn.so
expect "^schedules +3 of 3 tunable ops tuned from cnn.db \(0 with their template defaults\)$"
# The block is open: the log has every task of the target's block only.
expect "^block +NCHW${block}c, the log's fastest: [0-9.]+ ms estimated against 2 tasks untuned for NCHW(8|16)c$"
run run cnn.so --input x=cnn_input.npy --output-dir out --repeat 1
/usr/bin/python3 -c "
import numpy as np, sys
got, want = np.load('out/y.npy'), np.load('cnn_expected.npy')
sys.exit(0 if np.allclose(got, want, rtol=1e-4, atol=1e-5) else 1)" || fail "the tuned build's output does not match numpy"
run run cnn.onnx --db cnn.db --input x=cnn_input.npy --repeat 1
expect "^schedules +3 of 3 tunable ops tuned from cnn.db"

echo "== run --db --profile: each tuned kernel's time in the model beside the log's"
run run cnn.onnx --db cnn.db --repeat 3 --profile
[[ $(grep -cE "^profile .*  t[0-9]+_.* \((log [0-9.]+ ms, model/log [0-9.]+x; )?chosen in cnn.onnx: (log rank [1-5]|template default)\)$" <<<"$out") -eq 3 ]] ||
  fail "--profile with --db does not set each of the 3 tuned kernels beside the log"
expect "^profile +[0-9.]+ ms in [0-9]+ kernels, [0-9.]+% of the median latency [0-9.]+ ms$"
# A schedule chosen from the log has its time there; a template default chosen in the
# model has one only where the tuner measured that default too. The summary counts the
# kernels whose lines show a log time.
from_log=$(count cnn.db "select count(*) from model_choices where picked != 'template default'")
timed=$(grep -cE "^profile .*  t[0-9]+_.* \(log [0-9.]+ ms, model/log [0-9.]+x; " <<<"$out")
(( timed >= from_log )) || fail "--profile shows a log time for $timed kernels, but $from_log were chosen from the log"
if (( timed > 0 )); then
  expect "^profile +[0-9.]+ ms in the $timed kernels? the log times, which it estimates at [0-9.]+ ms \(model/log [0-9.]+x\); the other [0-9]+ kernels take [0-9.]+ ms$"
fi

echo "== export and import carry the model choices; a second import adds none"
run db export --db cnn.db -o cnn.jsonl
expect "^exported $logged records and 3 model choices from cnn.db to cnn.jsonl$"
run db import --db copy.db cnn.jsonl
expect "^read $logged records and 3 model choices from cnn.jsonl$"
expect "^added 3 model choices$"
run db import --db copy.db cnn.jsonl
expect "^added 0 model choices$"
choices="select group_concat(model || '|' || picked || '|' || trace || '|' || coalesce(config, ''), ';') from (select * from model_choices order by id)"
[[ "$(count copy.db "$choices")" == "$(count cnn.db "$choices")" ]] ||
  fail "the imported log's model choices differ from the exported log's"

echo "== a second run resumes: the 16 trials in the log spend the budget"
run tune cnn.onnx --db cnn.db --trials 16 --tuner random --seed 1 --task-scheduler round-robin --confirm 0 "${fixed[@]}" "${fast[@]}" --in-model 0
expect "^stopped +trial budget reached after 16 trials in "
[[ $(count cnn.db "select count(*) from records") -eq $logged ]] || fail "the resumed run measured again"

echo "== --space both: templates and the auto-scheduler share the trials; the build takes the faster"
run tune cnn.onnx --db both.db --trials 48 --space both --seed 1 "${fixed[@]}" "${fast[@]}" --in-model 0
expect "^tuner +xgb, seed 1, 48 trials shared by expected gain \(gradient task scheduler\), 4 per turn$"
expect "^ +0 +1 +auto +[0-9]+ sketches +$conv1$"
expect "^ +2 +1 +auto +2 sketches +$dense$"
# The warm-up gives every task one turn first, in order (its template first); a task's
# later turns alternate between its explorers.
expect "^task 2 \[template\] +trials 4 \(\+4\)  best [0-9.]+ GFLOP/s  total 12/48  latency [0-9.]+ ms"
expect "^task [0-2] \[auto\] +trials 4 \(\+4\)"
expect "^stopped +trial budget reached after 48 trials in "
auto_records=$(count both.db "select count(*) from records where config is null")
[[ "$auto_records" -ge 4 ]] || fail "the log has $auto_records auto-scheduled records, expected at least 4"
run build cnn.onnx --db both.db "${fixed[@]}" -o both.so
expect "^schedules +3 of 3 tunable ops tuned from both.db \(0 with their template defaults\)$"
run run both.so --input x=cnn_input.npy --output-dir out_both --repeat 1
/usr/bin/python3 -c "
import numpy as np, sys
got, want = np.load('out_both/y.npy'), np.load('cnn_expected.npy')
sys.exit(0 if np.allclose(got, want, rtol=1e-4, atol=1e-5) else 1)" || fail "the build of both explorers' log does not match numpy"

echo "== the block left open: the tasks of both blocks, the turns following the faster; the build takes it"
run tune cnn.onnx --db open.db --trials 40 --tuner random --seed 1 --task-scheduler round-robin --confirm 0 "${fast[@]}" --in-model 0
expect "^model +cnn.onnx: 9 nodes, 5 tasks$"
expect "^layouts +NCHW${block}c, NCHW(8|16)c: each way's tasks tuned, turns following the way estimated fastest; a build with this log takes the fastest$"
# The dense head is the same task in both ways; each conv is one task per block.
expect "^ +[0-4] +1 +template +[0-9]+ configs +NCHW(8|16)c NCHW(8|16)c +$dense$"
[[ $(grep -cE "^ +[0-4] +1 +template +[0-9]+ configs +NCHW(8|16)c +conv2d" <<<"$out") -eq 4 ]] ||
  fail "expected four conv tasks, two per block"
taken=$(sed -n 's/^layout  *NCHW[0-9]*c [0-9.]* ms, NCHW[0-9]*c [0-9.]* ms: builds with this log take NCHW\([0-9]*\)c$/\1/p' <<<"$out")
[[ -n "$taken" ]] || fail "the tune did not estimate both blocks and say which a build takes"
run build cnn.onnx --db open.db -o open.so
expect "^block +NCHW${taken}c, the log's fastest: [0-9.]+ ms estimated against [0-9.]+ ms for NCHW(8|16)c$"
expect "^schedules +3 of 3 tunable ops tuned from open.db \(0 with their template defaults\)$"
expect "^layout +activations in NCHW${taken}c between convs"
run run open.so --input x=cnn_input.npy --output-dir out_open --repeat 1
/usr/bin/python3 -c "
import numpy as np, sys
got, want = np.load('out_open/y.npy'), np.load('cnn_expected.npy')
sys.exit(0 if np.allclose(got, want, rtol=1e-4, atol=1e-5) else 1)" || fail "the build in the log's block does not match numpy"
# Each block fixed takes its own tasks from the same log.
for b in 8 16; do
  run run cnn.onnx --db open.db --layout "nchw${b}c" --input x=cnn_input.npy --output-dir "out_$b" --repeat 1
  expect "^schedules +3 of 3 tunable ops tuned from open.db"
  expect "^layout +activations in NCHW${b}c between convs"
  expect_not "^block "
  /usr/bin/python3 -c "
import numpy as np, sys
got, want = np.load('out_$b/y.npy'), np.load('cnn_expected.npy')
sys.exit(0 if np.allclose(got, want, rtol=1e-4, atol=1e-5) else 1)" || fail "the build in NCHW${b}c does not match numpy"
done

echo "== a log tuned in NCHW is not applied to the blocked convs: a warning says so; --layout nchw applies it"
run tune cnn.onnx --db nchw.db --layout nchw --trials 12 --tuner random --seed 1 --confirm 0 "${fast[@]}" --in-model 0
expect "^ +0 +1 +template +[0-9]+ configs +conv2d:N=1,C=3,H=32,W=32,K=8,R=3,S=3,stride=1,pad=1,dilation=1,groups=1,layout=NCHW,dtype=float32$"
run build cnn.onnx --db nchw.db -o nchw_as_blocked.so
expect "^schedules +1 of 3 tunable ops tuned from nchw.db \(2 with their template defaults\)$"
expect "^warning: conv2d_nchwc:N=1,C=3,.*: the log has records for this convolution only in another layout, block size or algorithm \(conv2d:N=1,C=3,H=32,W=32,K=8,.*layout=NCHW,dtype=float32\), which do not apply to this kernel; tune the model again to tune it; using the template default$"
run run nchw_as_blocked.so --input x=cnn_input.npy --output-dir out_nchw_as_blocked --repeat 1
/usr/bin/python3 -c "
import numpy as np, sys
got, want = np.load('out_nchw_as_blocked/y.npy'), np.load('cnn_expected.npy')
sys.exit(0 if np.allclose(got, want, rtol=1e-4, atol=1e-5) else 1)" || fail "the build of an NCHW log in the blocked layout does not match numpy"
run build cnn.onnx --db nchw.db --layout nchw -o nchw.so
expect "^schedules +3 of 3 tunable ops tuned from nchw.db \(0 with their template defaults\)$"
expect "^layout +NCHW \(no conv takes the blocked layout on this target\)$"

echo "== a log tuned with every conv direct does not apply to the Winograd conv: a warning says so; --layout nchwc-direct applies it"
run tune cnn.onnx --db direct.db --layout "nchw${block}c-direct" --trials 12 --tuner random --seed 1 --confirm 0 "${fast[@]}" --in-model 0
expect "^ +1 +1 +template +[0-9]+ configs +conv2d_nchwc:N=1,C=8,H=16,W=16,K=16,R=3,S=3,stride=1,pad=1,dilation=1,in_block=[0-9]+,out_block=[0-9]+,dtype=float32$"
run build cnn.onnx --db direct.db -o direct_as_winograd.so
expect "^warning: conv2d_winograd_nchwc:N=1,C=8,.*: the log has records for this convolution only in another layout, block size or algorithm \(conv2d_nchwc:N=1,C=8,.*\), which do not apply to this kernel; tune the model again to tune it \(or run with --layout nchwc-direct to apply them\); using the template default$"
run build cnn.onnx --db direct.db --layout nchwc-direct -o direct.so
expect "^schedules +3 of 3 tunable ops tuned from direct.db \(0 with their template defaults\)$"

echo "== the encoder: projections (matmul, M = batch x sequence), one fused attention over the heads (reading"
echo "   the projections as they are: the heads' transposes go into it), and the layer norm, which the"
echo "   auto-scheduler tunes whatever --space says"
run tune encoder.onnx --db enc.db --trials 20 --tuner xgb --seed 1 --space template "${fast[@]}" --in-model 0
expect "^model +encoder.onnx: [0-9]+ nodes, 5 tasks$"
expect "^ +0 +4 +template +[0-9]+ configs +matmul:M=16,N=64,K=64,"
expect "^ +1 +1 +template +[0-9]+ configs +attention:B=4,S=16,T=16,D=16,E=16,scale=0.25,mask_rows=0,heads=4,"
expect "^ +2 +1 +auto +[0-9]+ sketches +layer_norm:shape=1x16x64,axis=2,"
# The build applies the log to all eight ops of the five tasks, the layer norm's trace included.
run build encoder.onnx --db enc.db -o encoder_tuned.so
expect "^schedules +8 of 8 tunable ops tuned from enc.db"

echo "== a budget smaller than the task count: the untried tasks are named, and the job succeeds"
run tune encoder.onnx --db enc_small.db --trials 4 --tuner random --seed 1 "${fast[@]}" --in-model 0
expect "^ +1 +template +0 +0 +none \\(no trials\\)$"
expect "^warning: 4 of 5 tuning jobs got no trials; builds use their defaults \\(give --trials 20 or more for 4 per job\\)$"

echo "== refused"
/usr/bin/python3 -c '
import onnx
from onnx import TensorProto, helper
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "relu.onnx")' ||
  fail "could not write relu.onnx"
must_fail "relu.onnx has no node that a tuning task serves" tune relu.onnx --db relu.db --trials 4
must_fail "unknown --task-scheduler 'fair'" tune cnn.onnx --db cnn.db --task-scheduler fair
must_fail "--in-model must be at least 0, got -1" tune cnn.onnx --db cnn.db --in-model -1
must_fail "--dim sizes a model's dynamic dimensions" tune matmul:M=4,N=4,K=4 --db cnn.db --dim batch=2
must_fail "--shape gives a model's input a shape; give a .onnx model" tune matmul:M=4,N=4,K=4 --db cnn.db --shape x=2x4
must_fail "--layout chooses the layout of a model's convs" tune matmul:M=4,N=4,K=4 --db cnn.db --layout nchw
must_fail "unknown layout 'nhwc'; accepted: nchwc" tune cnn.onnx --db cnn.db --layout nhwc
must_fail "unknown layout 'nchw12c'; accepted: nchwc .*nchw8c or nchw16c" run cnn.onnx --layout nchw12c
echo "PASS"
