#!/usr/bin/env bash
# Fuzzing acceptance (issue 6): every libFuzzer target of fuzz/ for SECONDS
# each, then one line per target with its executions per second and whether
# it found anything, and a verdict line.
#
#   bench/fuzz.sh [SECONDS]      # default 60; about 10 min of one core at 60
#
# It wraps fuzz/run.sh (which builds with clang-14, ASan + UBSan, into
# $GATE_FUZZ_BUILD or build-fuzz/). Exit 0: nothing found; 1: a finding
# (saved under <build>/artifacts/, see fuzz/README.md); 2: bad usage;
# 3: no clang.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
[[ "$seconds" =~ ^[0-9]+$ && "$seconds" -gt 0 ]] || {
  echo "bench/fuzz.sh: SECONDS must be a positive integer, got \"$seconds\"" >&2
  exit 2
}
[[ $# -le 1 ]] || { echo "usage: bench/fuzz.sh [SECONDS]" >&2; exit 2; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$root/fuzz/run.sh" --seconds "$seconds" 2>&1 | tee "$out"
status=${PIPESTATUS[0]}
[[ $status -eq 3 || $status -eq 2 ]] && exit "$status"

# run.sh's summary lines: "<target> <n> execs <rate> exec/s  <status>".
echo "== fuzz acceptance (${seconds}s per target)"
printf '%-12s %12s  %s\n' target exec/s finding
found=0
ran=0
while read -r target _ _ rate _ rest; do
  case "$rest" in
  ok) finding=none ;;
  *) finding="YES: $rest"; found=1 ;;
  esac
  printf '%-12s %12s  %s\n' "$target" "$rate" "$finding"
  ran=$((ran + 1))
done < <(sed -n '/^== summary/,$p' "$out" | grep -E '^[a-z_]+ +[0-9]+ execs ')
if [[ $ran -eq 0 ]]; then
  echo "bench/fuzz.sh: fuzz/run.sh failed (exit $status) before any target ran" >&2
  exit 3
fi
if grep -q 'BUILD FAILED' "$out"; then
  grep 'BUILD FAILED' "$out"
  found=1
fi
if [[ $found -eq 0 && $status -eq 0 ]]; then
  echo "nothing found"
  exit 0
fi
echo "FINDINGS: see the artifacts named above"
exit 1
