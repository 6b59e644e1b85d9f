# Helpers the CLI test scripts source: run temper and check what it printed.
# Needs $temper (the binary) and $expect_error (tests/error/cli_expect_error.sh).

fail() {
  echo "FAIL: $*"
  exit 1
}
# Runs temper, which must succeed; its output (stdout and stderr) lands in $out.
run() {
  echo "\$ temper $*"
  out="$("$temper" "$@" 2>&1)"
  local status=$?
  echo "$out"
  [[ $status -eq 0 ]] || fail "temper $* exited with status $status"
}
# The output of the last run has a line matching the extended regex.
expect() {
  grep -Eq -- "$1" <<<"$out" || fail "no line of the output above matches '$1'"
}
expect_not() {
  ! grep -Eq -- "$1" <<<"$out" || fail "a line of the output above matches '$1'"
}
# A temper command that must fail with a message matching the pattern.
must_fail() {
  local pattern="$1"
  shift
  echo "\$ temper $* (must fail)"
  "$expect_error" "$pattern" "$temper" "$@" || fail "temper $* did not fail with '$pattern'"
}
# count LOG SQL: one number from a tuning log.
count() { /usr/bin/python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$1" "$2"; }
