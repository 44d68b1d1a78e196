#!/usr/bin/env bash
# Builds gate and the benchmark programs (Release, in build-bench/), makes the
# benchmark data once (cached in build-bench/data/), and prints the figures
# described in bench/README.md. Timings are printed, never asserted.
#
#   bench/run.sh [--regen] [--only core|stages|compare|demo|rank|tls|proxy] [--repeat R]
#                [--tasks N] [--runs K] [--compare-tasks N] [--compare-runs K]
#                [--no-build]
set -euo pipefail

usage() {
  sed -n '6,8p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}

root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-bench"
regen=0 only=all repeat=3 tasks=20000 runs=5 ctasks=100000 cruns=3 do_build=1
while [ $# -gt 0 ]; do
  case "$1" in
  --regen) regen=1 ;;
  --no-build) do_build=0 ;;
  --only) only=${2:?--only needs a value}; shift ;;
  --repeat) repeat=${2:?}; shift ;;
  --tasks) tasks=${2:?}; shift ;;
  --runs) runs=${2:?}; shift ;;
  --compare-tasks) ctasks=${2:?}; shift ;;
  --compare-runs) cruns=${2:?}; shift ;;
  -h | --help) usage ;;
  *) echo "bench/run.sh: unknown option $1" >&2; usage ;;
  esac
  shift
done
case "$only" in all | core | stages | compare | demo | rank | tls | proxy) ;; *) echo "--only: core|stages|compare|demo|rank|tls|proxy" >&2; exit 2 ;; esac

if [ ! -x /usr/bin/time ]; then
  echo "bench/run.sh: /usr/bin/time is missing; install it: apt-get install -y time" >&2
  exit 3
fi

if [ "$do_build" = 1 ]; then
  # -O2 rather than CMake's Release -O3: g++ 12 at -O3 raises a false
  # -Wrestrict inside std::string (GCC bug 105329) that -Werror turns into a
  # failed build. -O2 -DNDEBUG is also what RelWithDebInfo users run.
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" >/dev/null
  cmake --build "$build" --target gate gate-bench-gen gate-bench-stages gate-bench-compare gate-bench-rank gate-bench-tls gate-bench-proxy -j2 >"$build/bench-build.log" 2>&1 ||
    { tail -30 "$build/bench-build.log"; echo "bench/run.sh: build failed (log: $build/bench-build.log)" >&2; exit 3; }
fi
gate="$build/gate"
bin="$build/bench"

load() { cut -d' ' -f1-3 /proc/loadavg; }

# Makes data directory $1 with "gate-bench-gen $2 $1 ${@:3}" unless it is
# already complete; --regen remakes it.
ensure_data() {
  local dir=$1 kind=$2
  shift 2
  if [ "$regen" = 1 ] || [ ! -f "$dir/.complete" ]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    "$bin/gate-bench-gen" "$kind" "$dir" "$@"
    touch "$dir/.complete"
  fi
}

# Runs a command under /usr/bin/time -v; sets wall, user, sys, rss_mb, rc.
timed() {
  local out="$build/bench-time.txt"
  set +e
  /usr/bin/time -v -o "$out" "$@" >"$build/bench-cmd.log" 2>&1
  rc=$?
  set -e
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$out")
  user=$(awk -F': ' '/User time/ {print $2}' "$out")
  sys=$(awk -F': ' '/System time/ {print $2}' "$out")
  rss_mb=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$out")
}

verdict() { # value target -> "ok" or "MISSED"
  awk -v v="$1" -v t="$2" 'BEGIN { print (v < t) ? "ok" : "MISSED" }'
}

core_dir="$build/data/core-${tasks}x${runs}"
if [ "$only" = all ] || [ "$only" = core ] || [ "$only" = stages ]; then
  ensure_data "$core_dir" core --tasks "$tasks" --runs "$runs"
fi

if [ "$only" = all ] || [ "$only" = core ]; then
  total=$((tasks * runs))
  echo "== core: gate run --mode replay-only --quiet, $tasks tasks x k=$runs = $total replayed runs, concurrency 2"
  echo "   (targets: wall < 2 s, peak RSS < 512 MB; machine: $(nproc) cores)"
  for i in $(seq 1 "$repeat"); do
    before=$(load)
    rm -rf "$core_dir/out"
    timed "$gate" run --config "$core_dir/gate.yaml" --mode replay-only --quiet
    if [ "$rc" != 0 ]; then
      cat "$build/bench-cmd.log" >&2
      echo "bench/run.sh: gate run exited $rc" >&2
      exit 3
    fi
    printf '   run %d: wall %6.2f s (%s)  %8.0f runs/s  peak RSS %4d MB (%s)  user %s s  sys %s s  load %s\n' \
      "$i" "$wall" "$(verdict "$wall" 2)" "$(awk -v n="$total" -v w="$wall" 'BEGIN { print n / w }')" \
      "$rss_mb" "$(verdict "$rss_mb" 512)" "$user" "$sys" "$before"
  done
fi

if [ "$only" = all ] || [ "$only" = stages ]; then
  echo "== stages of the same replay, one thread (gate-bench-stages), load $(load)"
  "$bin/gate-bench-stages" "$core_dir/gate.yaml" --out "$build/data/stages-out"
fi

if [ "$only" = all ] || [ "$only" = compare ]; then
  rep_dir="$build/data/reports-${ctasks}x${cruns}"
  ensure_data "$rep_dir" reports --tasks "$ctasks" --runs "$cruns"
  echo "== compare: $ctasks-task reports at k=$cruns ($(du -m "$rep_dir/baseline.json" | cut -f1) MB and $(du -m "$rep_dir/current.json" | cut -f1) MB)"
  echo "   (targets: wall < 1 s, peak RSS < 512 MB)"
  if "$gate" compare --help >/dev/null 2>&1; then
    for i in $(seq 1 "$repeat"); do
      before=$(load)
      timed "$gate" compare --baseline "$rep_dir/baseline.json" --current "$rep_dir/current.json" --json /dev/null
      # 0 = gate passed, 1 = gate failed: both are a finished comparison.
      if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
        tail -5 "$build/bench-cmd.log" >&2
        echo "bench/run.sh: gate compare exited $rc" >&2
        exit 3
      fi
      printf '   gate compare %d: wall %6.2f s (%s)  peak RSS %5d MB (%s)  user %s s  sys %s s  exit %d  load %s\n' \
        "$i" "$wall" "$(verdict "$wall" 1)" "$rss_mb" "$(verdict "$rss_mb" 512)" "$user" "$sys" "$rc" "$before"
    done
  else
    echo "   gate has no compare command in this build: in-process figures only"
  fi
  echo "   in process, stage by stage (gate-bench-compare):"
  "$bin/gate-bench-compare" "$rep_dir/baseline.json" "$rep_dir/current.json" | sed 's/^/   /'
fi

if [ "$only" = all ] || [ "$only" = demo ]; then
  demo_out="$build/data/demo-out"
  rm -rf "$demo_out"
  "$gate" run --config "$root/fixtures/demo/gate.yaml" --mode replay-only --quiet --out "$demo_out" >/dev/null
  baseline="$root/baselines/demo.json"
  note=""
  if [ ! -f "$baseline" ]; then
    baseline="$demo_out/report.json"
    note=" (baselines/demo.json is missing: the demo report against itself)"
  fi
  echo "== demo: gate compare on the demo$note (target < 50 ms)"
  if "$gate" compare --help >/dev/null 2>&1; then
    for i in $(seq 1 "$repeat"); do
      start=$(date +%s%N)
      set +e
      "$gate" compare --baseline "$baseline" --current "$demo_out/report.json" --json /dev/null >/dev/null 2>&1
      rc=$?
      set -e
      ms=$((($(date +%s%N) - start) / 1000000))
      printf '   gate compare %d: %4d ms (%s)  exit %d\n' "$i" "$ms" "$(verdict "$ms" 50)" "$rc"
    done
  else
    echo "   gate has no compare command in this build"
  fi
fi

if [ "$only" = all ] || [ "$only" = rank ]; then
  echo "== rank: rank::rank, 8 strategies x 10,000 tasks at k=3, 1,000 bootstrap resamples, in process"
  echo "   (target: wall < 2 s per ranking; load $(load))"
  timed "$bin/gate-bench-rank" --strategies 8 --tasks 10000 --runs 3 --bootstrap 1000 --repeat "$repeat"
  sed 's/^/   /' "$build/bench-cmd.log"
  printf '   whole process (reports made in memory + %s rankings): wall %s s  user %s s  sys %s s  peak RSS %s MB\n' \
    "$repeat" "$wall" "$user" "$sys" "$rss_mb"
fi

if [ "$only" = all ] || [ "$only" = tls ]; then
  echo "== tls: fresh calls to the fake upstream over TLS with keep-alive, one shared client (gate-bench-tls)"
  echo "   (targets: (a) >= 2,000 calls/s; (b) wall within 10% of 5,000 x 0.05 / 64 = 3.91 s)"
  for i in $(seq 1 "$repeat"); do
    echo "   round $i, load $(load)"
    "$bin/gate-bench-tls"
  done
fi

if [ "$only" = all ] || [ "$only" = proxy ]; then
  echo "== proxy: replayed requests through proxy::Server vs direct calls to the fake upstream (gate-bench-proxy)"
  echo "   (targets: p50 added latency < 0.5 ms; >= 5,000 replayed requests/s at concurrency 16)"
  for i in $(seq 1 "$repeat"); do
    echo "   round $i, load $(load)"
    "$bin/gate-bench-proxy"
  done
fi
