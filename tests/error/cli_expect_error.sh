#!/usr/bin/env bash
# Runs a temper command that must fail: passes when it exits non-zero (and not by a
# crash: no signal, no "internal error") and its message matches the expected pattern.
# Usage: cli_expect_error.sh PATTERN temper ARGS...
pattern="$1"
shift
output="$("$@" 2>&1)"
status=$?
echo "$output"
if [[ $status -eq 0 ]]; then
  echo "FAIL: exit status 0, expected an error"
  exit 1
fi
if [[ $status -ge 128 ]]; then
  echo "FAIL: killed by signal $((status - 128))"
  exit 1
fi
if grep -q "internal error" <<<"$output"; then
  echo "FAIL: an internal error instead of a user error"
  exit 1
fi
if ! grep -Eq -- "$pattern" <<<"$output"; then
  echo "FAIL: the message does not match '$pattern'"
  exit 1
fi
echo "PASS (exit status $status)"
