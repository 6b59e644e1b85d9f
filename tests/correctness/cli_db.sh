#!/usr/bin/env bash
# `temper db` end to end: builds a log by importing JSON lines written here (one record
# carries a real schedule trace, made by `temper run --save-trace`), then checks what
# list, best, stats, export, import, merge and prune print and do, and that bad logs are
# refused and left as they were.
# Usage: cli_db.sh TEMPER
set -u
temper="$1"
here="$(cd "$(dirname "$0")" && pwd)"
expect_error="$here/../error/cli_expect_error.sh"
source "$here/cli_test_lib.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/temper_cli_db_XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

W=matmul:M=64,N=48,K=32,transpose_a=0,transpose_b=0,dtype=float32
W8=matmul:M=8,N=8,K=8,transpose_a=0,transpose_b=0,dtype=float32
LLVM="llvm -mcpu=native"
# The naive schedule's trace: the default's reads B packed into panels, a re-expression of
# the op that a trace alone does not replay (a config does).
run run "$W" --schedule naive --repeat 1 --min-repeat-ms 1 --save-trace trace.json
trace="$(tr -d '\n' <trace.json)"
# The template's default config of W, as a tuning job logs it: import replays every
# valid record's config, so the records below carry it, tagged ("tile") to tell them apart.
run tune "$W" --target "$LLVM" --trials 1 --db config_source.db
run db export --db config_source.db -o config_source.jsonl
knobs="$(/usr/bin/python3 -c "import json,sys; print(json.dumps(json.loads(open(sys.argv[1]).readline())['config']['knobs'], separators=(',', ':')))" config_source.jsonl)"

# record WORKLOAD OP TARGET COMPILER MEAN COSTS ERROR TIMESTAMP CONFIG [TUNER]: one JSON
# line; a CONFIG {"tile":N} stands for W's default config tagged N; without TUNER, the
# record names none (an export of a Temper before schema 6).
record() {
  local error_message='""'
  local config="$9"
  local tuner=""
  [[ $config =~ ^\{\"tile\":([0-9]+)\}$ ]] && config="{\"knobs\":$knobs,\"tile\":${BASH_REMATCH[1]}}"
  [[ $7 == None ]] || error_message='"it failed"'
  [[ -n ${10:-} ]] && tuner="\"tuner\":\"${10}\","
  printf '{"workload":{"op":"%s","workload":"%s"},"target":{"target":"%s","cpu_model":"Test CPU","cpu_features":"fpu avx2 fma","cores":2,"compiler":"%s"},"trace":%s,"config":%s,%s"costs":%s,"mean":%s,"error":"%s","error_message":%s,"timestamp":%s,"temper_version":"0.1.0"}\n' \
    "$2" "$1" "$3" "$4" "$trace" "$config" "$tuner" "$6" "$5" "$7" "$error_message" "$8"
}
{
  record "$W" matmul "$LLVM" "LLVM 19.1.7" 4e-05 '[4e-05]' None 1700000001 '{"tile":1}'
  # 196608 FLOPs in 19.6608 us: 10 GFLOP/s
  record "$W" matmul "$LLVM" "LLVM 19.1.7" 1.96608e-05 '[1.96608e-05,1.96608e-05]' None 1700000002 '{"tile":2}' ga
  record "$W" matmul "$LLVM" "LLVM 19.1.7" 3e-05 '[3e-05]' None 1700000003 '{"tile":3}'
  record "$W" matmul "$LLVM" "LLVM 19.1.7" null '[]' CompileError 1700000004 '{"tile":4}'
  record "$W" matmul c "cc 12.2" 5e-05 '[5e-05]' None 1700000005 null
  record oldop:x=1 oldop "$LLVM" "LLVM 19.1.7" 1e-03 '[1e-03]' None 1700000006 null
  record "$W8" matmul "$LLVM" "LLVM 19.1.7" null '[]' RunTimeout 1700000007 '{"tile":7}'
} >records.jsonl

# import: everything once; a second import adds nothing.
run db import --db log.db records.jsonl
expect '^read 7 records from records.jsonl$'
expect '^added 7 records to log.db, skipped 0 already present$'
run db import --db log.db records.jsonl
expect '^added 0 records to log.db, skipped 7 already present$'

# list: one line per workload and target, GFLOP/s where the op still parses.
run db list --db log.db
expect '^WORKLOAD +TARGET +RECORDS +VALID +BEST_MS +GFLOP/S$'
expect "^$W +llvm -mcpu=native +4 +3 +0\.0197 +10\.00$"
expect "^$W +c +1 +1 +0\.0500 +3\.93$"
expect '^oldop:x=1 +llvm -mcpu=native +1 +1 +1\.0000 +-$'
expect "^$W8 +llvm -mcpu=native +1 +0 +- +-$"

# best: top-k per target, any spelling of the workload, and a trace `temper run` replays.
run db best matmul:K=32,N=48,M=64 --db log.db --target "$LLVM" -k 2 --trace-out best.json
expect '^target +llvm -mcpu=native +\(4 records, 3 valid\)$'
expect '^ +RANK +MEAN_MS +GFLOP/S +TIMES +COSTS_MS +TIME +TUNER +CONFIG$'
expect '^ +1 +0\.0197 +10\.00 +1 +0\.0197,0\.0197 +2023-11-14T22:13:22Z +ga +\{.*"tile":2\}$'
expect '^ +2 +0\.0300 +6\.55 +1 +0\.0300 +2023-11-14T22:13:23Z +- +\{.*"tile":3\}$'
expect_not '^ +3 '
expect '^ +best measured on Test CPU, 2 cores, LLVM 19.1.7, avx2 fma$'
expect '^wrote the best trace to best.json'
run run "$W" --trace best.json --repeat 1 --min-repeat-ms 1
expect '^check +ok'
# The default's trace reads B in panels: a trace alone does not replay it, and the error
# says what does.
run run "$W" --repeat 1 --min-repeat-ms 1 --save-trace default_trace.json
must_fail "does not replay on matmul's definition.*replays only with its config: apply its record with --db LOG" \
  run "$W" --trace default_trace.json
run db best "$W" --db log.db
expect '^target +llvm -mcpu=native '
expect '^target +c +\(1 record, 1 valid\)$'
expect '^ +1 +0\.0500 +3\.93 +1 +0\.0500 +2023-11-14T22:13:25Z +- +-$'
run db best oldop:x=1 --db log.db
expect '^ +1 +1\.0000 +- +1 '
run db best "$W8" --db log.db
expect 'no valid records'
must_fail 'no records of matmul:M=2,N=2,K=2.* in log.db' db best matmul:M=2,N=2,K=2 --db log.db
must_fail "no records of .* on target 'c -num-cores=3'.*it has records on: llvm -mcpu=native, c" \
  db best "$W" --db log.db --target "c -num-cores=3"
must_fail 'several targets \(llvm -mcpu=native, c\): choose one with --target' \
  db best "$W" --db log.db --trace-out x.json
must_fail 'unknown op' db best nosuchop:x=1 --db log.db
must_fail '-k must be at least 1' db best "$W" --db log.db -k 0

# stats
run db stats --db log.db
expect '^log +log.db$'
expect '^schema +6$'
expect '^file size +[0-9.]+ (B|KiB)'
expect '^records +7 \(5 valid\)$'
expect '^  None +5$'
expect '^  CompileError +1$'
expect '^  RunTimeout +1$'
expect '^workloads +3 \(3 with records\)$'
expect '^targets +2$'
expect '^  llvm -mcpu=native +6 records +Test CPU, 2 cores, LLVM 19.1.7, avx2 fma$'
expect '^  c +1 record +Test CPU, 2 cores, cc 12.2, avx2 fma$'
expect '^first record +2023-11-14T22:13:21Z$'
expect '^last record +2023-11-14T22:13:27Z$'

# export, and back: the same records, to a file or to stdout.
run db export --db log.db -o out.jsonl
expect '^exported 7 records from log.db to out.jsonl$'
[[ $(wc -l <out.jsonl) -eq 7 ]] || fail "out.jsonl does not have 7 lines"
"$temper" db export --db log.db >stdout.jsonl 2>/dev/null || fail "export to stdout failed"
cmp -s out.jsonl stdout.jsonl || fail "export to stdout differs from export to a file"
run db import --db copy.db out.jsonl
run db export --db copy.db -o copy.jsonl
cmp -s out.jsonl copy.jsonl || fail "a log exported, imported and exported again changed"

# merge: a record already present is skipped, a new one added; sources are read-only.
{
  record "$W" matmul "$LLVM" "LLVM 19.1.7" 1.96608e-05 '[1.96608e-05,1.96608e-05]' None 1700000002 '{"tile":2}' ga
  record "$W" matmul "$LLVM" "LLVM 19.1.7" 6e-05 '[6e-05]' None 1700000008 '{"tile":8}'
} >other.jsonl
run db import --db other.db other.jsonl
other_before="$(md5sum <other.db)"
run db merge --db log.db other.db copy.db
expect '^read 2 records from other.db$'
expect '^read 7 records from copy.db$'
expect '^added 1 record to log.db, skipped 8 already present$'
[[ $(md5sum <other.db) == "$other_before" ]] || fail "merge changed its source other.db"
run db merge --db merged.db other.db
expect '^added 2 records to merged.db, skipped 0 already present$'

# prune: the fastest valid records per workload and target; failed ones unless asked.
run db prune --db log.db --keep 1
expect '^WORKLOAD +TARGET +KEPT +REMOVED_VALID +REMOVED_FAILED$'
expect "^$W +llvm -mcpu=native +2 +3 +0$"
expect '^removed 3 records, kept 5; log.db: .* -> '
run db list --db log.db
expect "^$W +llvm -mcpu=native +2 +1 +0\.0197 +10\.00$"
run db prune --db log.db --keep 1 --drop-errors
expect "^$W +llvm -mcpu=native +1 +0 +1$"
expect "^$W8 +llvm -mcpu=native +0 +0 +1$"
expect '^removed 2 records, kept 3;'
run db prune --db log.db --keep 1 --drop-errors
expect '^nothing to remove from log.db \(3 records\)$'
run db best "$W" --db log.db --target "$LLVM"
expect '^ +1 +0\.0197 +10\.00 '

# A schedule measured several times (a tuning job's confirmation) ranks by its median:
# tile 9's lucky 0.0100 ms does not beat tile 2, its median 0.0500 ms does; prune keeps
# or removes all its times together.
{
  record "$W" matmul "$LLVM" "LLVM 19.1.7" 1.96608e-05 '[1.96608e-05]' None 1700000002 '{"tile":2}'
  record "$W" matmul "$LLVM" "LLVM 19.1.7" 1e-05 '[1e-05]' None 1700000010 '{"tile":9}'
  record "$W" matmul "$LLVM" "LLVM 19.1.7" 6e-05 '[6e-05]' None 1700000011 '{"tile":9}'
  record "$W" matmul "$LLVM" "LLVM 19.1.7" 5e-05 '[5e-05]' None 1700000012 '{"tile":9}'
} >remeasured.jsonl
run db import --db ranked.db remeasured.jsonl
run db best "$W" --db ranked.db -k 2
expect '^ +1 +0\.0197 +10\.00 +1 +0\.0197 +.*"tile":2\}$'
expect '^ +2 +0\.0500 +3\.93 +3 +0\.0500 +2023-11-14T22:13:32Z +- +\{.*"tile":9\}$'
expect '^  a schedule measured several TIMES ranks by its median record, shown$'
run db list --db ranked.db
expect "^$W +llvm -mcpu=native +4 +4 +0\.0197 +10\.00$"
run db prune --db ranked.db --keep 2
expect '^nothing to remove from ranked.db \(4 records\)$'
run db prune --db ranked.db --keep 1
expect "^$W +llvm -mcpu=native +1 +3 +0$"

# Bad logs: refused with a message, and left as they were (or not created).
must_fail 'no tuning log at absent.db' db stats --db absent.db
must_fail 'no tuning log at absent.db' db prune --db absent.db --keep 1
must_fail 'no tuning log at absent.db' db merge --db log.db absent.db
[[ ! -e absent.db ]] || fail "a read-only subcommand created absent.db"
cp log.db future.db
printf '\x00\x00\x00\x63' | dd of=future.db bs=1 seek=60 conv=notrunc status=none
future_before="$(md5sum <future.db)"
for args in "list --db future.db" "prune --db future.db --keep 1" "import --db future.db records.jsonl" \
  "merge --db log.db future.db" "merge --db future.db other.db"; do
  # shellcheck disable=SC2086
  must_fail 'future.db was written by a newer Temper \(schema 99\); this one reads up to 6' db $args
done
[[ $(md5sum <future.db) == "$future_before" ]] || fail "future.db was changed"
head -c 5000 /dev/urandom >garbage.db
garbage_before="$(md5sum <garbage.db)"
must_fail 'garbage.db is not a Temper tuning log or is damaged' db prune --db garbage.db --keep 1
must_fail 'garbage.db is not a Temper tuning log or is damaged' db import --db garbage.db records.jsonl
[[ $(md5sum <garbage.db) == "$garbage_before" ]] || fail "garbage.db was changed"
log_before="$(md5sum <log.db)"
must_fail 'garbage.db is not a Temper tuning log or is damaged' db merge --db log.db other.db garbage.db
{
  cat records.jsonl
  echo '{"workload": {"op": "matmul"'
} >broken.jsonl
must_fail 'broken.jsonl:8: not valid JSON.*nothing was imported' db import --db log.db broken.jsonl
[[ $(md5sum <log.db) == "$log_before" ]] || fail "a failed merge or import changed log.db"
must_fail 'cannot open tuning log /nonexistent/folder/log.db' db import --db /nonexistent/folder/log.db records.jsonl
must_fail 'cannot open tuning log /nonexistent/folder/log.db' db merge --db /nonexistent/folder/log.db other.db
must_fail 'cannot write' db export --db log.db -o /nonexistent/folder/out.jsonl

# A negative schema version, and another program's database that sets one of Temper's:
# refused before anything is written (the WAL switch included), left byte-identical.
cp log.db negative.db
printf '\xff\xff\xff\xff' | dd of=negative.db bs=1 seek=60 conv=notrunc status=none
negative_before="$(md5sum <negative.db)"
for args in "db list --db negative.db" "db import --db negative.db records.jsonl" \
  "tune matmul:M=4,N=4,K=4 --db negative.db --trials 1"; do
  # shellcheck disable=SC2086
  must_fail 'negative.db is an SQLite database but not a Temper tuning log \(its schema version is -1' $args
done
[[ $(md5sum <negative.db) == "$negative_before" ]] || fail "negative.db was changed"
/usr/bin/python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE notes (body TEXT)'); c.execute('PRAGMA user_version = 2'); c.commit()" foreign.db
foreign_before="$(md5sum <foreign.db)"
for args in "db stats --db foreign.db" "db import --db foreign.db records.jsonl" \
  "tune matmul:M=4,N=4,K=4 --db foreign.db --trials 1"; do
  # shellcheck disable=SC2086
  must_fail "foreign.db is an SQLite database but not a Temper tuning log \(schema version 2 but no table 'workloads'\)" $args
done
[[ $(md5sum <foreign.db) == "$foreign_before" ]] || fail "foreign.db was changed"

# A record another program damaged: list, best, export and prune skip it and say so, the
# others stay usable, and nothing deletes it.
run db import --db bad_row.db records.jsonl
/usr/bin/python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE records SET trace = '{not json' WHERE id = 2\"); c.commit()" bad_row.db
unreadable='warning: tuning log bad_row.db: 1 record cannot be read and was skipped \(record 2: malformed trace JSON'
run db list --db bad_row.db
expect "^$W +llvm -mcpu=native +4 +3 +0\.0300 +6\.55$"
expect "$unreadable"
run db best "$W" --db bad_row.db --target "$LLVM"
expect '^ +1 +0\.0300 '
expect "$unreadable"
run db export --db bad_row.db -o bad_row.jsonl
expect '^exported 6 records from bad_row.db to bad_row.jsonl$'
expect "$unreadable"
run db prune --db bad_row.db --keep 1
expect "$unreadable"
expect '^removed 1 record, kept 6;'
[[ $(count bad_row.db "SELECT count(*) FROM records WHERE trace = '{not json'") -eq 1 ]] || fail "prune removed the unreadable record"

# import refuses records that cannot be real measurements (one made up fast would be
# what every build applies) and those whose schedule does not replay on their workload,
# names them, and adds the others.
{
  record "$W" matmul "$LLVM" "LLVM 19.1.7" 1e-12 '[1e-12]' None 1700000030 '{"tile":30}'
  record "$W" matmul "$LLVM" "LLVM 19.1.7" 4e-05 '[5e-05]' None 1700000031 '{"tile":31}'
  record "$W" matmul "$LLVM" "LLVM 19.1.7" 5e-05 '[5e-05]' None 1700000032 '{"tile":32}'
  record "$W" matmul "$LLVM" "LLVM 19.1.7" 5e-05 '[5e-05]' None 1700000033 '{"knobs":{"no_such_knob":1}}'
} >implausible.jsonl
run db import --db implausible.db implausible.jsonl
expect '^added 1 record to implausible.db, skipped 0 already present$'
expect '^warning: refused 3 records \(not plausible measurements'
expect '^  record 1: its time, 1e-12 s, is 196608000 GFLOP/s, more than any CPU of 2 cores can do'
expect '^  record 2: its mean 4e-05 s is not among its costs'
expect "^  record 4: its config does not give a schedule of $W for $LLVM that lowers \(config JSON names unknown knob 'no_such_knob'"
# A record that says it was measured on this machine is held to this machine's measured
# FMA peak (times four for Winograd's credited FLOPs): 1450 GFLOP/s a core is within the
# bound for any CPU (1536) but beyond four times any core's real peak.
/usr/bin/python3 - "$W" "$LLVM" "$trace" "$knobs" "$(nproc)" >this_machine.jsonl <<'PY'
import json, sys
workload, target, trace, knobs, cores = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4]), int(sys.argv[5])
info = {}
for line in open("/proc/cpuinfo"):
    key, _, value = line.partition(":")
    info.setdefault(key.strip(), value.strip())
mean = 2 * 64 * 48 * 32 / (1450e9 * cores)
for tag, time in ((40, mean), (41, 1e-3)):
    print(json.dumps({"workload": {"op": "matmul", "workload": workload},
                      "target": {"target": target, "cpu_model": info["model name"], "cpu_features": info["flags"],
                                 "cores": cores, "compiler": "LLVM 19.1.7"},
                      "trace": trace, "config": {"knobs": knobs, "tile": tag}, "costs": [time], "mean": time,
                      "error": "None", "error_message": "", "timestamp": 1700000000 + tag, "temper_version": "0.1.0"}))
PY
run db import --db this_machine.db this_machine.jsonl
expect '^added 1 record to this_machine.db, skipped 0 already present$'
expect '^  record 1: its time, .* s, is [0-9]+ GFLOP/s, more than this machine, where it says it was measured, can do \([0-9]+ GFLOP/s: 4x its measured FMA peak of [0-9]+ GFLOP/s\)$'

# A build applies the records of this machine only: these, of "Test CPU", take
# --any-machine, which names the machine. It takes the log's best record that still
# applies: a record whose config the template no longer takes gives way to the next best,
# with a warning, and a log none of whose records applies is said to give the default (no
# "tuned is" line then).
{
  record "$W" matmul "$LLVM" "LLVM 19.1.7" 1e-05 '[1e-05]' None 1700000020 '{"tile":20}'
  record "$W" matmul "$LLVM" "LLVM 19.1.7" 3e-05 '[3e-05]' None 1700000021 null
} >fallback.jsonl
run db import --db fallback.db fallback.jsonl
expect '^added 2 records to fallback.db'
# A later Temper's template without the knob the best record names; import would refuse
# such a record, so the log is changed underneath.
set_stale_config() {
  /usr/bin/python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE records SET config = '{\\\"no_such_knob\\\":1}' WHERE config LIKE '%\\\"tile\\\":20%'\"); c.commit()" "$1"
  [[ $(count "$1" "SELECT count(*) FROM records WHERE config LIKE '%no_such_knob%'") -eq 1 ]] || fail "no stale config in $1"
}
set_stale_config fallback.db
run run "$W" --db fallback.db --repeat 1 --min-repeat-ms 1
expect "warning: $W: the log's records of it were measured on another machine \(Test CPU, 2 cores, LLVM 19\.1\.7, avx2 fma\), not this one; --any-machine applies them; using the template default"
expect '^schedule +template default \(log fallback.db has no record that applies\)$'
run run "$W" --db fallback.db --any-machine --repeat 1 --min-repeat-ms 1
expect "warning: $W: the log's best record no longer applies \(rank 1: .*\); applying its next best, rank 2 \(0\.030 ms when measured on another machine: Test CPU, 2 cores"
expect '^schedule +tuned \(log fallback.db\)$'
expect '^default .*tuned is [0-9.]+x the default.s speed$'
must_fail '--any-machine chooses among a log.s records: give --db' run "$W" --any-machine
head -n 1 fallback.jsonl >stale.jsonl
run db import --db stale.db stale.jsonl
set_stale_config stale.db
run run "$W" --db stale.db --any-machine --repeat 1 --min-repeat-ms 1
expect "info: $W: its only valid record no longer applies \(rank 1: .*\); using the template default"
expect '^schedule +template default \(log stale.db has no record that applies\)$'
expect_not 'tuned is'

# A log or folder this user may not write: tuning says which and what to do, before
# SQLite's "unable to open" or "disk I/O error". (As root, the commands run as nobody.)
as_user() {
  if [[ $(id -u) -eq 0 ]]; then
    setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
  else
    "$@"
  fi
}
if [[ $(id -u) -ne 0 ]] || command -v setpriv >/dev/null; then
  chmod 755 "$work"
  mkdir writable_folder readonly_folder
  cp log.db writable_folder/readonly.db
  cp log.db readonly_folder/log.db
  chmod 444 writable_folder/readonly.db
  chmod 666 readonly_folder/log.db
  chmod 777 writable_folder
  chmod 555 readonly_folder
  readonly_before="$(md5sum <writable_folder/readonly.db)"
  as_user "$expect_error" 'tuning log writable_folder/readonly.db is not writable by this user, and tuning writes to it: make it writable' \
    "$temper" tune matmul:M=4,N=4,K=4 --db writable_folder/readonly.db --trials 1 || fail "a read-only log was not refused"
  as_user "$expect_error" 'the folder of tuning log readonly_folder/log.db .* is not writable by this user' \
    "$temper" db import --db readonly_folder/log.db records.jsonl || fail "a log in a read-only folder was not refused"
  [[ $(md5sum <writable_folder/readonly.db) == "$readonly_before" ]] || fail "the read-only log was changed"
  as_user "$temper" db list --db writable_folder/readonly.db >/dev/null 2>&1 || fail "a read-only log could not be listed"
  chmod 755 readonly_folder
else
  echo "SKIP: the read-only log checks need setpriv to run as another user than root"
fi
echo "PASS"
