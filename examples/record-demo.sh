#!/usr/bin/env bash
# Records the bundled demo suite against a real provider, into a directory
# of its own (the committed fixtures/demo cache is never touched), so the
# demo can be replayed, compared and gated on real answers. Costs tokens:
# 44 tasks x k=3 = 132 calls of at most 256 completion tokens each.
#
#   examples/record-demo.sh [--out DIR] [--provider openai|anthropic] [--model NAME]
#                           [--base-url URL] [--stream]
#
# The key comes from OPENAI_API_KEY (provider openai) or ANTHROPIC_API_KEY
# (anthropic); without it the script says so and exits 0 having done
# nothing. It runs `gate doctor` first and stops if no completion comes back.
# Never run in CI: it refuses when CI is set.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
gate=${GATE:-$root/build/gate}
out=$root/.gate/recorded-demo
provider=openai model="" base_url="" stream=false
while [ $# -gt 0 ]; do
  case "$1" in
  --out) out=${2:?--out needs a directory}; shift ;;
  --provider) provider=${2:?}; shift ;;
  --model) model=${2:?}; shift ;;
  --base-url) base_url=${2:?}; shift ;;
  --stream) stream=true ;;
  -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "record-demo.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

if [ -n "${CI:-}" ]; then
  echo "record-demo.sh: CI is set; this script spends real tokens and is not meant for CI" >&2
  exit 2
fi
case "$provider" in
openai) key_env=OPENAI_API_KEY; : "${model:=gpt-4o-mini}"; : "${base_url:=https://api.openai.com/v1}" ;;
anthropic) key_env=ANTHROPIC_API_KEY; : "${model:=claude-3-5-haiku-latest}"; : "${base_url:=https://api.anthropic.com}" ;;
*) echo "record-demo.sh: --provider must be openai or anthropic" >&2; exit 2 ;;
esac
if [ -z "${!key_env:-}" ]; then
  echo "record-demo.sh: $key_env is not set; nothing recorded (export it to record the demo against $provider)"
  exit 0
fi
if [ ! -x "$gate" ]; then
  echo "record-demo.sh: no gate binary at $gate; build it (README \"Building by hand\") or set GATE" >&2
  exit 3
fi

# The demo's suite, with a config of our own next to it. The key never
# enters a file: the config names its variable only.
rm -rf "$out"
mkdir -p "$out"
cp -R "$root/fixtures/demo/suite" "$out/suite"
cp -R "$root/fixtures/demo/prompts" "$out/prompts"
cat >"$out/gate.yaml" <<YAML
# Written by examples/record-demo.sh: the demo suite recorded against $provider.
suite:
  path: suite
  version: v2
prompt:
  system_file: prompts/support.md
model:
  provider: $provider
  base_url: $base_url
  api_key_env: $key_env
  key_alias: record-demo
  name: $model
  temperature: 0
  max_tokens: 256
  stream: $stream
runs: 3
concurrency: 4
cache:
  dir: cache
  mode: record
outputs:
  dir: out
YAML

"$gate" doctor --config "$out/gate.yaml"
"$gate" run --config "$out/gate.yaml"
echo "record-demo.sh: recorded into $out/cache; replay offline with:"
echo "  $gate run --config $out/gate.yaml --mode replay-only"
