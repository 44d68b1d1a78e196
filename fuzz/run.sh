#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 (ASan + UBSan) in build-fuzz/
# and runs each for a fixed time, seeded from fuzz/corpus/<target>/.
#
#   fuzz/run.sh [--seconds N | --runs R] [--build-only] [target...]
#
# N defaults to 60. --runs R instead runs exactly R inputs per target from a
# fixed seed: the same inputs on every machine, so CI's verdict does not
# depend on how fast the runner is (a new finding comes with a code change,
# not with luck). New inputs go to build-fuzz/corpus/<target>/ (the seeds
# in the source tree are never written); a crash or property violation is
# saved as build-fuzz/artifacts/<target>-crash-* and makes the script exit 1.
# The summary prints executions and executions per second per target.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# GATE_FUZZ_BUILD: another build directory (one per engineer on a shared checkout).
build="${GATE_FUZZ_BUILD:-$root/build-fuzz}"
seconds=60
runs=0
build_only=0
targets=()
all=(config suite_line report cache_entry retry_after markdown check regex sse redact import)

while [[ $# -gt 0 ]]; do
  case "$1" in
  --seconds)
    [[ $# -ge 2 && "$2" =~ ^[0-9]+$ && "$2" -gt 0 ]] || { echo "fuzz/run.sh: --seconds needs a positive integer" >&2; exit 2; }
    seconds=$2
    shift 2
    ;;
  --runs)
    [[ $# -ge 2 && "$2" =~ ^[0-9]+$ && "$2" -gt 0 ]] || { echo "fuzz/run.sh: --runs needs a positive integer" >&2; exit 2; }
    runs=$2
    shift 2
    ;;
  --build-only) build_only=1; shift ;;
  -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
  -*) echo "fuzz/run.sh: unknown option $1 (expected --seconds N, --runs R, --build-only or target names)" >&2; exit 2 ;;
  *)
    [[ " ${all[*]} " == *" $1 "* ]] || { echo "fuzz/run.sh: unknown target $1 (known: ${all[*]})" >&2; exit 2; }
    targets+=("$1")
    shift
    ;;
  esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=("${all[@]}")

command -v clang++-14 >/dev/null || { echo "fuzz/run.sh: clang++-14 not found (apt-get install clang-14)" >&2; exit 3; }

# Until the root CMakeLists.txt adds the fuzz directory itself, a project
# include hook adds it (fuzz/standalone.cmake).
# -U: a build dir configured before that line keeps the hook in its cache,
# which would then add every target twice.
hook=(-UCMAKE_PROJECT_INCLUDE)
grep -q 'add_subdirectory(fuzz)' "$root/CMakeLists.txt" || hook=(-DCMAKE_PROJECT_INCLUDE="$root/fuzz/standalone.cmake")

san="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -DGATE_BUILD_TESTS=OFF -DGATE_FUZZ=ON -DGATE_UNITY=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_CXX_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" "${hook[@]}" >/dev/null
# One target at a time, so a module that does not build fails only the
# targets that need it.
built=()
summary=()
failed=0
for t in "${targets[@]}"; do
  if cmake --build "$build" -j2 --target "fuzz_$t"; then
    built+=("$t")
  else
    summary+=("$(printf '%-12s BUILD FAILED' "$t")")
    failed=1
  fi
done
if [[ $build_only -eq 1 ]]; then
  [[ ${#summary[@]} -eq 0 ]] || printf '%s\n' "${summary[@]}"
  exit $failed
fi

# A 16 MiB quarantine (ASan's default is 256 MiB) still holds many inputs'
# freed memory for use-after-free, and keeps the process small: the config
# and import targets fork a child for each YAML text outside the plain block
# form (gate/config/scan.cpp), and a fork costs in proportion to the
# process's resident memory (fuzz_config: 102 execs/s at 401 MiB, 176 at
# 76 MiB).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:quarantine_size_mb=16:thread_local_quarantine_size_kb=256}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$build/artifacts"
for t in "${built[@]}"; do
  corpus="$build/corpus/$t"
  mkdir -p "$corpus"
  seeds=()
  [[ -d "$root/fuzz/corpus/$t" ]] && seeds=("$root/fuzz/corpus/$t")
  dict=()
  [[ -f "$root/fuzz/$t.dict" ]] && dict=(-dict="$root/fuzz/$t.dict")
  log="$build/artifacts/$t.log"
  budget=(-max_total_time="$seconds")
  [[ $runs -gt 0 ]] && budget=(-runs="$runs" -seed=1)
  echo "== fuzz_$t for ${budget[*]} (log: $log)"
  status=ok
  # One job, a 10 s per-input limit (a slow input is a finding too), and
  # inputs up to 64 KiB so the JSON seeds fit.
  if ! "$build/fuzz/fuzz_$t" "$corpus" "${seeds[@]}" "${dict[@]}" "${budget[@]}" -timeout=10 \
    -max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" >"$log" 2>&1; then
    status="FAILED (see $log)"
    failed=1
    # The log stays on the runner; what CI prints is all a reader gets, so
    # show the finding's kind, its stack and the input (libFuzzer's Base64).
    echo "-- the end of $log"
    tail -n 60 "$log"
  fi
  executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  executed=${executed:-0}
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  summary+=("$(printf '%-12s %10s execs %8s exec/s  %s' "$t" "$executed" "${rate:-0}" "$status")")
done
printf '%s\n' "== summary" "${summary[@]}"
exit $failed
