#!/usr/bin/env bash
# `temper tune` and `temper run --db` end to end, on real processes and a real SQLite file:
# a tuning run, applying the log, resume without re-measuring, a job killed with SIGKILL
# mid-run, SIGTERM stopping after the current batch, and two jobs sharing one log.
# Usage: cli_tune.sh TEMPER WORKDIR
set -u
temper="$1"
work="$2"
rm -rf "$work" && mkdir -p "$work"
db="$work/tuning.db"
fast=(--min-repeat-ms 1 --repeat 2 --batch-size 4)

source "$(dirname "$0")/cli_test_lib.sh"
# Every record of a workload has a distinct config: no trial was measured twice (run
# with --confirm 0, which re-measures nothing at the end).
no_repeats() {
  local records distinct
  records=$(count "$1" "select count(*) from records")
  distinct=$(count "$1" "select count(distinct workload_id || ' ' || config) from records")
  [[ "$records" == "$distinct" ]] || fail "$records records but $distinct distinct configs in $1"
}
distinct_configs() { count "$1" "select count(distinct config) from records"; }

echo "== a short tuning run"
out=$("$temper" tune matmul:M=32,N=32,K=32 --db "$db" --trials 6 --tuner random --seed 1 "${fast[@]}" 2>&1) ||
  fail "tune exited $?: $out"
echo "$out"
grep -q "measured   6 trials" <<<"$out" || fail "expected 6 trials measured"
best_config=$(grep "^config" <<<"$out")
# By default the 3 best are measured again until each has 3 times: 6 more at least.
again=$(sed -n 's/^confirmed  the best schedules measured \([0-9]*\) more times.*/\1/p' <<<"$out")
(( ${again:-0} >= 6 )) || fail "expected the best 3 schedules measured again (at least 6 records)"
[[ $(count "$db" "select count(*) from records") == $((6 + again)) ]] || fail "expected $((6 + again)) records in the log"
[[ $(distinct_configs "$db") == 6 ]] || fail "a re-measurement is not of a trial's config"

echo "== applying the log"
out=$("$temper" run matmul:M=32,N=32,K=32 --db "$db" --repeat 1 --min-repeat-ms 1 2>&1) || fail "run exited $?: $out"
echo "$out"
grep -Eq "check +ok" <<<"$out" || fail "the tuned build's output was not checked ok"
grep -q "applying the best of the log" <<<"$out" || fail "no info line saying the log was applied"
grep -Eq "^default +" <<<"$out" || fail "no default time printed beside the tuned one"
# Which of the 6 random configs is best depends on the machine's load: the weight is
# packed (B read in panels) exactly when the best one says so.
if grep -q '"b_layout":"panels"' <<<"$best_config"; then
  grep -q "^weights" <<<"$out" || fail "the best config reads B in panels, yet run did not say it packed the weight"
else
  grep -q "^weights" <<<"$out" && fail "the best config reads B as stored, yet run says it timed a packed weight"
fi

echo "== a conv2d whose default config computes in NCHWc: timed on its weight packed once, as a model runs it"
out=$("$temper" run conv2d:N=1,C=8,H=8,W=8,K=16,R=3,S=3,pad=1 --repeat 1 --min-repeat-ms 1 2>&1) ||
  fail "run exited $?: $out"
echo "$out"
grep -Eq "^weights +packed once into the config's layout before timing" <<<"$out" ||
  fail "the NCHWc conv was not timed on its weight packed once"
grep -Eq "check +ok" <<<"$out" || fail "the prepacked conv's output was not checked ok"

echo "== resume: the same job with a larger budget measures only what is new"
out=$("$temper" tune matmul:M=32,N=32,K=32 --db "$db" --trials 10 --tuner random --seed 1 "${fast[@]}" 2>&1) ||
  fail "resumed tune exited $?: $out"
echo "$out"
grep -q "resumed    6 trials" <<<"$out" || fail "expected 6 resumed trials"
grep -q "measured   4 trials" <<<"$out" || fail "expected 4 new trials"
[[ $(distinct_configs "$db") == 10 ]] || fail "the resumed job measured a config again"

echo "== SIGKILL mid-run leaves a readable log, and the job resumes"
kdb="$work/killed.db"
"$temper" tune matmul:M=48,N=40,K=24 --db "$kdb" --trials 400 --tuner ga --seed 3 "${fast[@]}" >"$work/killed.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  [[ -f "$kdb" ]] && (( $(count "$kdb" "select count(*) from records" 2>/dev/null || echo 0) >= 8 )) && break
  sleep 0.1
done
kill -9 "$pid"
wait "$pid" 2>/dev/null
before=$(count "$kdb" "select count(*) from records") || fail "the killed job's log is not readable"
(( before >= 8 )) || fail "the job logged only $before records before it was killed"
out=$("$temper" tune matmul:M=48,N=40,K=24 --db "$kdb" --trials $((before + 4)) --tuner ga --seed 3 --confirm 0 \
  "${fast[@]}" 2>&1) ||
  fail "tune after SIGKILL exited $?: $out"
echo "$out"
grep -q "resumed    $before trials" <<<"$out" || fail "expected $before resumed trials"
[[ $(count "$kdb" "select count(*) from records") == $((before + 4)) ]] || fail "expected $((before + 4)) records"
no_repeats "$kdb"

echo "== SIGTERM stops after the current batch, keeping it"
tdb="$work/term.db"
"$temper" tune matmul:M=40,N=32,K=16 --db "$tdb" --trials 400 --tuner random "${fast[@]}" >"$work/term.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  [[ -f "$tdb" ]] && (( $(count "$tdb" "select count(*) from records" 2>/dev/null || echo 0) >= 4 )) && break
  sleep 0.1
done
kill -TERM "$pid"
wait "$pid"
status=$?
cat "$work/term.log"
[[ $status == 143 ]] || fail "expected exit status 143 after SIGTERM, got $status"
grep -q "stopped    stopped on request" "$work/term.log" || fail "no 'stopped on request' line"
measured=$(sed -n 's/^measured   \([0-9]*\) trials.*/\1/p' "$work/term.log")
[[ $(count "$tdb" "select count(*) from records") == "$measured" ]] || fail "the log lacks measured records"

echo "== two jobs tuning into one log at once"
sdb="$work/shared.db"
"$temper" tune matmul:M=16,N=16,K=16 --db "$sdb" --trials 12 --tuner random --confirm 0 "${fast[@]}" >"$work/a.log" 2>&1 &
a=$!
"$temper" tune matmul:M=24,N=16,K=8 --db "$sdb" --trials 12 --tuner grid --confirm 0 "${fast[@]}" >"$work/b.log" 2>&1 &
b=$!
wait "$a" || { cat "$work/a.log"; fail "job A failed"; }
wait "$b" || { cat "$work/b.log"; fail "job B failed"; }
[[ $(count "$sdb" "select count(*) from records") == 24 ]] || fail "expected 24 records from the two jobs"
no_repeats "$sdb"
echo "PASS"
