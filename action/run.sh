#!/usr/bin/env bash
# The steps of the gate GitHub Action (action.yml), one per subcommand, so
# that they can run (and be tested) outside GitHub with a fake environment:
#   run.sh fetch | deps | cache-key | build | install | check | comment | enforce
# Inputs arrive as INPUT_* environment variables (action.yml maps them; they
# are never pasted into a script, so no input can inject shell). Outputs go
# to $GITHUB_OUTPUT, the summary to $GITHUB_STEP_SUMMARY.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build_dir=${GATE_BUILD_DIR:-$root/build-action}
gate=${GATE_BIN:-$build_dir/gate}
out_dir=${INPUT_OUT_DIR:-.gate/ci}
output=${GITHUB_OUTPUT:-/dev/null}
summary=${GITHUB_STEP_SUMMARY:-/dev/null}

fail() { echo "::error::gate action: $*" >&2; exit 2; }

# name=value to $GITHUB_OUTPUT; a value with a newline uses the heredoc form
# with a random delimiter that cannot occur in the value.
set_output() {
  if [[ $2 == *$'\n'* ]]; then
    local delim
    delim="gate_$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    printf '%s<<%s\n%s\n%s\n' "$1" "$delim" "$2" "$delim" >>"$output"
  else
    printf '%s=%s\n' "$1" "$2" >>"$output"
  fi
}

# A value from the verdict JSON (gate.verdict/1): the layout puts every
# top-level member and every metric on its own line with keys in a fixed
# order (docs/verdict-schema.md), so a line match reads it exactly; nothing
# is computed here.
top_field() { sed -n "s/^\"$2\":\([^,]*\),\{0,1\}\$/\1/p" "$1" | head -n1; }
metric_field() { sed -n "s/^{\"key\":\"$2\",.*\"$3\":\([^,}]*\).*/\1/p" "$1" | head -n1; }

# The release binary of the action's own ref (GATE_RELEASE_REF, from
# github.action_ref): gate-linux-<arch> and its .sha256 from that tag's
# release (GATE_RELEASE_BASE/<tag>/, default the action repository's
# releases/download). Outputs source=release and gate=<path> once the sha256
# matches; source=build when the ref names no release or its release has no
# binary (HTTP 404), and only then do the build steps run. A binary whose
# checksum is missing or wrong fails the step: an unverified binary is never
# run, and a tampered download is no reason to build silently instead.
#
# A commit SHA (GitHub's advice for pinning a third-party action), or no
# ref at all (`uses: ./`, whose checkout's HEAD is then the commit), stands
# for the release its CMakeLists.txt names when that release's binary was
# built from this very commit: its `gate --version` says which (the sha256
# is verified first, so only the release's own binary is run). Any other
# commit, a release's or not, builds from source. GATE_ACTION_COMMIT names
# the commit instead (tests).
fetch() {
  local ref=${GATE_RELEASE_REF:-${GITHUB_ACTION_REF:-}}
  local base=${GATE_RELEASE_BASE:-${GITHUB_SERVER_URL:-}/${GATE_RELEASE_REPOSITORY:-${GITHUB_ACTION_REPOSITORY:-}}/releases/download}
  local asset dest code want got pinned=${GATE_ACTION_COMMIT:-} version
  asset="gate-linux-$(uname -m)"
  dest=${RUNNER_TEMP:-$root}/gate-release
  version=$(sed -nE 's/^project\(gate VERSION ([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' "$root/CMakeLists.txt")
  if [ -z "$pinned" ]; then
    if [[ $ref =~ ^[0-9a-f]{40}$ ]]; then
      pinned=$ref
    elif [ -z "$ref" ]; then
      pinned=$(git -C "$root" rev-parse HEAD 2>/dev/null || true)
    fi
  fi
  if [ -n "$pinned" ]; then
    [[ $pinned =~ ^[0-9a-f]{40}$ ]] || fail "the action's commit '$pinned' is no 40-digit SHA"
    [ -n "$version" ] || fail "no project version in $root/CMakeLists.txt to find the release of commit $pinned"
    echo "gate action: commit ${pinned:0:12}: looking for it in release v$version"
    ref=v$version
  fi
  # A major tag (v1) is moved by release.yml to each newest release of its
  # major (docs/ci.md, "Versions"), so the CMakeLists.txt of the action's own
  # checkout names the release it stands for.
  if [[ $ref =~ ^v([0-9]+)$ ]]; then
    local major=${BASH_REMATCH[1]}
    [ -n "$version" ] || fail "no project version in $root/CMakeLists.txt to resolve $ref"
    [ "${version%%.*}" = "$major" ] ||
      fail "the tag $ref points at gate $version, which is no $ref.x.y release; use a version tag (vX.Y.Z)"
    echo "gate action: $ref is gate $version"
    ref=v$version
  fi
  if [[ ! $ref =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    echo "gate action: ref '$ref' is no release tag (vX.Y.Z): building gate from source"
    set_output source build
    return 0
  fi
  command -v curl >/dev/null || fail "the release download needs curl (apt-get install curl in a container job)"
  mkdir -p "$dest"
  rm -f "$dest/$asset" "$dest/$asset.sha256"
  code=$(curl -sSL --retry 2 -o "$dest/$asset" -w '%{http_code}' "$base/$ref/$asset") ||
    fail "cannot download $base/$ref/$asset"
  if [ "$code" = 404 ]; then
    rm -f "$dest/$asset"
    echo "gate action: release $ref has no $asset: building gate from source"
    set_output source build
    return 0
  fi
  [ "$code" = 200 ] || fail "downloading $base/$ref/$asset: HTTP $code"
  code=$(curl -sSL --retry 2 -o "$dest/$asset.sha256" -w '%{http_code}' "$base/$ref/$asset.sha256") ||
    fail "cannot download $base/$ref/$asset.sha256"
  [ "$code" = 200 ] || { rm -f "$dest/$asset"; fail "release $ref has no $asset.sha256 (HTTP $code): refusing an unverified binary"; }
  want=$(awk 'NR == 1 { print $1 }' "$dest/$asset.sha256")
  [[ $want =~ ^[0-9a-f]{64}$ ]] || { rm -f "$dest/$asset"; fail "$asset.sha256 of release $ref holds no sha256: refusing the binary"; }
  got=$(sha256sum "$dest/$asset" | cut -d' ' -f1)
  if [ "$want" != "$got" ]; then
    rm -f "$dest/$asset"
    fail "sha256 mismatch for $asset of release $ref: $asset.sha256 says $want, the download is $got; refusing it"
  fi
  chmod +x "$dest/$asset"
  if [ -n "$pinned" ]; then
    local built
    built=$("$dest/$asset" --version | sed -nE 's/.*\(commit ([0-9a-f]{7,40})\).*/\1/p')
    if [ -z "$built" ] || [ "${pinned:0:${#built}}" != "$built" ]; then
      rm -f "$dest/$asset"
      echo "gate action: commit ${pinned:0:12} is not release $ref (built from ${built:-an unknown commit}): building gate from source"
      set_output source build
      return 0
    fi
  fi
  echo "gate action: $("$dest/$asset" --version) from release $ref, sha256 $got verified"
  set_output source release
  set_output gate "$dest/$asset"
}

deps() {
  if [ "$(id -u)" -eq 0 ]; then
    bash "$root/.ci/deps"
  elif command -v sudo >/dev/null; then
    sudo bash "$root/.ci/deps"
  else
    bash "$root/.ci/deps"
  fi
}

# The build cache key: the sources that make the binary (the CMake scripts
# of cmake/ too: the commit stamp, the man page), and the OS and its release.
cache_key() {
  local sum
  sum=$(cd "$root" && find CMakeLists.txt cmake gate -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.in' -o -name '*.cmake' -o -name 'CMakeLists.txt' \) |
    LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
  # The build links the runner's shared libraries: a new image is a new key.
  local os
  # shellcheck source=/dev/null # the runner's own file
  os=$(. /etc/os-release 2>/dev/null && printf '%s-%s' "${ID:-unknown}" "${VERSION_ID:-}")
  set_output key "gate-build-$(uname -s)-$(uname -m)-${os:-unknown}-$sum"
}

# Only the gate target is built. The tests stay configured (doctest-dev is
# one of .ci/deps' packages anyway), so that a build directory configured for
# the tests can be brought up to date here without losing them. The binary
# runs on the runner that built it, so it links the system's shared libraries
# (GATE_PORTABLE=OFF): the static archives the release binary needs are
# Debian 12's, and ubuntu-latest's may lack or differ in them (RE2 on Abseil).
build() {
  GATE_BUILD_DIR=$build_dir GATE_TARGET=gate GATE_PORTABLE=${GATE_PORTABLE:-OFF} bash "$root/.ci/build"
}

# Puts the binary that the fetch or build step produced on PATH for the
# job's later steps ($GITHUB_PATH, as `gate`) and outputs its path (gate).
# INPUT_INSTALL_ONLY=true stops the action here (action.yml skips the rest),
# for workflows that run gate's commands themselves.
install() {
  case ${INPUT_INSTALL_ONLY:-false} in
    true | false) ;;
    *) fail "install-only: expected true or false, got \"$INPUT_INSTALL_ONLY\"" ;;
  esac
  [ -x "$gate" ] || fail "no gate binary at $gate (did the fetch or build step run?)"
  local bin=${RUNNER_TEMP:-$root}/gate-bin version
  mkdir -p "$bin"
  ln -sfn "$(realpath "$gate")" "$bin/gate"
  version=$("$bin/gate" --version) || fail "$gate does not run"
  [ -z "${GITHUB_PATH:-}" ] || printf '%s\n' "$bin" >>"$GITHUB_PATH"
  set_output gate "$bin/gate"
  echo "gate action: $version on PATH ($bin/gate)"
}

# Words of a whitespace-separated input, never glob-expanded.
words() {
  local -n into=$1
  set -f
  # shellcheck disable=SC2034,SC2206
  into=($2)
  set +f
}

# The cache as the pull request's base branch has it, for `gate check
# --trusted-cache` (docs/ci.md "A committed cache"): a PR can rewrite a
# committed entry and recompute its checksum, but not the base branch's
# copy. INPUT_TRUSTED_CACHE is "base" (the default), "off" or a directory.
# Prints the directory, or nothing when there is none to compare with (not a
# pull request, the cache not committed on the base branch, no fetch).
trusted_cache() {
  local want=${INPUT_TRUSTED_CACHE:-base} config=$1
  case $want in
    off) return 0 ;;
    base) ;;
    *)
      [ -d "$want" ] || fail "trusted-cache: expected base, off or a directory, got \"$want\""
      printf '%s\n' "$want"
      return 0
      ;;
  esac
  local base=${GITHUB_BASE_REF:-} dir top rel tmp
  [ -n "$base" ] || return 0
  # `gate config show` resolves cache.dir against the config's directory.
  dir=$("$gate" config show --config "$config" | sed -n 's/^cache\.dir: \(.*[^ ]\) *# .*/\1/p' | head -n1)
  dir=${dir#\"}
  dir=${dir%\"}
  [ -n "$dir" ] && [ -d "$dir" ] || return 0
  top=$(git -C "$dir" rev-parse --show-toplevel 2>/dev/null) || return 0
  rel=$(realpath --relative-to="$top" "$dir")
  if ! git -C "$top" fetch --quiet --depth=1 origin "refs/heads/$base" 2>/dev/null ||
    ! git -C "$top" cat-file -e "FETCH_HEAD:$rel" 2>/dev/null; then
    echo "gate action: no committed cache on $base to trust; replayed entries are not compared" >&2
    return 0
  fi
  tmp=$(mktemp -d "${RUNNER_TEMP:-/tmp}/gate-trusted-cache.XXXXXX")
  git -C "$top" archive --format=tar FETCH_HEAD -- "$rel" | tar -x -C "$tmp"
  printf '%s\n' "$tmp/$rel"
}

# The artifact's name: gate-report for ./gate.yaml, else with the config's
# path in it (upload-artifact refuses a name used twice in one workflow run,
# so two gates in one workflow need two names), and the shard. Where the
# name cannot keep the path as it is (a / or a space becomes -, a name not
# ending in .yaml), the first 8 hex digits of the path's sha256 follow, so
# that demo/gate.yaml, demo-gate.yaml and "demo gate.yaml" stay apart.
artifact_name() {
  local config=${1#./} shard=$2 name=gate-report base
  if [ "$config" != gate.yaml ]; then
    base=${config%.yaml}
    name+=-$(printf '%s' "$base" | tr -c 'A-Za-z0-9._-' '-')
    if [ "$base" = "$config" ] || [[ $base =~ [^A-Za-z0-9._-] ]]; then
      name+=-$(printf '%s' "$config" | sha256sum | cut -c1-8)
    fi
  fi
  printf '%s\n' "$name${shard:+-shard-${shard%/*}-of-${shard#*/}}"
}

check() {
  [ -x "$gate" ] || fail "no gate binary at $gate (did the build step run?)"
  mkdir -p "$out_dir"
  # Nothing from an earlier step may pass for this run's result.
  # (A report given as input stays: it may live here.)
  [ -n "${INPUT_REPORTS:-}" ] || rm -f "$out_dir"/report.json
  rm -f "$out_dir"/report.md "$out_dir"/report.xml "$out_dir"/verdict.* \
    "$out_dir"/cache-misses.txt "$out_dir"/artifacts.txt
  local -a args=() extra=() thresholds=() reports=()
  words thresholds "${INPUT_THRESHOLDS:-}"
  for t in "${thresholds[@]}"; do
    [[ $t =~ ^[a-z0-9-]+=[A-Za-z0-9.]+$ ]] || fail "thresholds: expected name=value (e.g. max-success-drop-pp=3), got \"$t\""
    args+=("--${t%%=*}" "${t#*=}")
  done
  words extra "${INPUT_ARGS:-}"
  local config=${INPUT_CONFIG:-gate.yaml} baseline=${INPUT_BASELINE:-} shard=${INPUT_SHARD:-}
  local report=$out_dir/report.json code=0
  local -a verdict_files=(--json "$out_dir/verdict.json" --markdown "$out_dir/verdict.md" --html "$out_dir/verdict.html"
    --junit "$out_dir/verdict.xml")

  if [ -n "${INPUT_REPORTS:-}" ]; then
    # Compare reports made elsewhere: one, or partial ones merged first.
    [ -n "$baseline" ] || fail "the reports input needs the baseline input"
    words reports "${INPUT_REPORTS}"
    local -a files=()
    for pattern in "${reports[@]}"; do
      # shellcheck disable=SC2206
      local -a matched=($pattern)
      [ -e "${matched[0]}" ] || fail "reports: nothing matches \"$pattern\""
      files+=("${matched[@]}")
    done
    if [ "${#files[@]}" -gt 1 ]; then
      "$gate" merge --out "$report" "${files[@]}" || code=$?
    else
      report=${files[0]}
    fi
    if [ "$code" -eq 0 ]; then
      "$gate" compare --baseline "$baseline" --current "$report" --config "$config" "${verdict_files[@]}" \
        "${args[@]}" "${extra[@]}" || code=$?
    fi
  elif [ -n "$shard" ]; then
    # One slice of a sharded suite: a partial report for a later merge job.
    "$gate" run --config "$config" --shard "$shard" --out "$out_dir" ${INPUT_MODE:+--mode "$INPUT_MODE"} \
      "${extra[@]}" || code=$?
  else
    local trusted
    trusted=$(trusted_cache "$config")
    "$gate" check --config "$config" --out "$out_dir" ${baseline:+--baseline "$baseline"} \
      ${INPUT_MODE:+--mode "$INPUT_MODE"} ${trusted:+--trusted-cache "$trusted"} \
      ${INPUT_CONFIRM:+--confirm "$INPUT_CONFIRM"} "${verdict_files[@]}" "${args[@]}" "${extra[@]}" || code=$?
  fi

  local verdict
  case $code in
    0) verdict=pass ;;
    1) verdict=fail ;;
    4) verdict=cache-miss ;;
    *) verdict=error ;;
  esac
  [ -n "$shard" ] && [ "$code" -eq 0 ] && verdict=partial
  local v=$out_dir/verdict.json
  # An undecided verdict exits 0 (on_inconclusive: warn or pass) or 1
  # (fail): a later step reading the output must not take it for a pass, nor
  # for a measured regression.
  if { [ "$verdict" = pass ] || [ "$verdict" = fail ]; } && [ -f "$v" ] &&
    [ "$(top_field "$v" status)" = '"inconclusive"' ]; then
    verdict=inconclusive
  fi
  set_output verdict "$verdict"
  set_output exit-code "$code"
  if [ -f "$v" ]; then
    set_output success-rate "$(metric_field "$v" success_rate current)"
    set_output delta-pp "$(metric_field "$v" success_rate delta)"
    set_output consistency-gap "$(metric_field "$v" consistency_gap current)"
    set_output regressed "$(top_field "$v" regressed)"
  fi
  [ -f "$report" ] && set_output report-path "$report"

  if [ "$code" -eq 4 ]; then
    {
      echo "### ⚠ gate: responses missing from the cache"
      echo
      echo "This run was replay-only (a fork PR has no API key) and some responses are not recorded."
      echo "A maintainer records them with the key (\`gate run --config $config --mode replay\`) on a push to main,"
      echo "or locally, and commits or caches them. The list is in the artifact (cache-misses.txt)."
    } >>"$summary"
  elif [ "$verdict" = error ]; then
    echo "### ❌ gate could not run (exit $code); see the job log" >>"$summary"
  elif [ "$verdict" = partial ]; then
    echo "### gate: shard $shard ran; its partial report is merged by a later job" >>"$summary"
  fi

  local list=""
  # The JUnit files too (report.xml per run, verdict.xml per decision), for
  # a test-report step that reads the artifact.
  for f in "$report" "$out_dir/report.md" "$out_dir/report.xml" "$out_dir/verdict.md" "$out_dir/verdict.json" \
    "$out_dir/verdict.html" "$out_dir/verdict.xml" "$out_dir/cache-misses.txt"; do
    [ -f "$f" ] && list+="$f"$'\n'
  done
  list=${list%$'\n'}
  set_output artifact-paths "$list"
  printf '%s\n' "$list" >"$out_dir/artifacts.txt"
  set_output artifact-name "$(artifact_name "$config" "$shard")"
}

comment() {
  local v=$out_dir/verdict.json
  [ -f "$v" ] || { echo "gate action: no verdict to comment on" >&2; return 0; }
  # A comment is a convenience: failing to post one never fails the job.
  "$gate" comment --report "$v" --id "${INPUT_COMMENT_ID:-verdict}" ||
    echo "::warning::gate: the PR comment could not be posted (exit $?); the verdict is in the job summary"
}

enforce() {
  local code=${GATE_EXIT:-}
  [ -n "$code" ] || fail "the check step did not finish"
  case $code in
    0) exit 0 ;;
    1)
      if [ "${GATE_VERDICT:-}" = inconclusive ]; then
        echo "::error::gate: inconclusive, and on_inconclusive is fail (the job summary names the command that decides it)"
      else
        echo "::error::gate: the gate failed (see the verdict in the job summary)"
      fi ;;
    4) echo "::error::gate: responses missing from the cache (see the job summary)" ;;
    *) echo "::error::gate could not run (exit $code)" ;;
  esac
  exit "$code"
}

case ${1:-} in
  fetch) fetch ;;
  deps) deps ;;
  cache-key) cache_key ;;
  build) build ;;
  install) install ;;
  check) check ;;
  comment) comment ;;
  enforce) enforce ;;
  *) echo "usage: run.sh fetch|deps|cache-key|build|install|check|comment|enforce" >&2; exit 2 ;;
esac
