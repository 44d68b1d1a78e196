#include <gate/init/templates.hpp>

namespace gate::init::templates {

// clang-format off
const std::string_view k_prompt =
R"(You are the support assistant for Acme Outfitters, talking to {{customer}}.
Greet the customer by name and answer in at most three sentences.

Policy:
- Returns are accepted within 30 days of delivery, with the receipt.
- Refunds go back to the original payment method within 5-7 business days.
- Shipping costs $4.95; orders over $50 ship free.
- International orders arrive in 10-14 business days.
- When asked for JSON, reply with the JSON object only.
)";

// One case a line (docs/suite-format.md); each shows other check types
// (docs/suite-format.md "Check types" lists them all, llm_judge among them).
const std::string_view k_cases =
R"({"id": "return-window", "vars": {"customer": "Ann"}, "input": "How long do I have to return a jacket?", "checks": [{"type": "icontains", "value": "30 days"}, {"type": "not_contains", "value": "60 days"}]}
{"id": "refund-timing", "vars": {"customer": "Ben"}, "input": "When will I see my refund?", "checks": [{"type": "regex", "pattern": "5\\s*(-|to|–)\\s*7 business days"}]}
{"id": "shipping-cost", "vars": {"customer": "Chen"}, "input": "What does shipping cost on an order of thirty dollars? Reply with the amount only.", "checks": [{"type": "number", "value": 4.95, "tolerance": 0.01}]}
{"id": "intent-json", "vars": {"customer": "Dara"}, "input": "Reply in JSON with the fields \"intent\" (one of refund, shipping, other) and \"order\" (the order number): I want my money back for order A-1001.", "checks": [{"type": "json", "paths": [{"path": "/intent", "equals": "refund"}, {"path": "/order", "equals": "A-1001"}]}]}
{"id": "intent-word", "vars": {"customer": "Eve"}, "input": "Is this message about a refund, shipping or something else? Reply with one word only: Where is my parcel?", "checks": [{"type": "equals", "value": "shipping", "ignore_case": true}]}
{"id": "international", "vars": {"customer": "Femi"}, "input": "Do you ship to Canada, and how long does it take?", "checks": [{"type": "contains", "value": "Femi"}, {"type": "contains_any", "values": ["10-14", "10 to 14"]}, {"type": "length", "unit": "words", "max": 60}]}
)";

const std::string_view k_gitignore =
R"(# Written by `gate init`: local reports stay out of git. The cache
# (evals/cache) is meant to be committed: CI replays it.
.gate/
)";

const std::string_view k_gate_yaml =
R"(# Written by `gate init`. Every key: README "Configuration reference" and
# docs/config.md.
suite:
  path: evals/support   # the dataset: cases, expected values and checks, sha256-pinned
  version: v1
prompt:
  # The prompt under test: editing it is an ordinary change, not a new suite
  # version. {{customer}} comes from each case's "vars".
  system_file: prompts/support.md
model:
  provider: @PROVIDER@
  base_url: @BASE_URL@
  api_key_env: @KEY_ENV@   # the variable that holds the key; gate never writes the key anywhere
  key_alias: default   # stored in reports instead of the key
  name: @MODEL@
  temperature: 0
@SEED@runs: 3
cache:
  dir: evals/cache   # recorded answers: commit them, so CI and the pre-push hook replay offline
baseline: baselines/support.json
confirm:
  # Six tasks are too few for any change to be significant on its own: when
  # gate check is undecided and the key is exported, it re-asks the tasks
  # that got worse, old and new prompt, and decides on those fresh runs.
  runs: 3           # at least 3 fresh runs a side (more, up to 10, where needed); 0 = off
  max_calls: 200    # the most fresh calls one confirmation makes
outputs:
  dir: .gate/out   # reports of local runs; not for committing
)";

// examples/workflows/pr-gate.yml with the cache where gate.yaml keeps it and
// the provider's key (tests/unit/test_init_init.cpp keeps the two equal).
const std::string_view k_workflow =
R"(# Written by `gate init`: the pull-request gate. Replay-only on pull
# requests (no key needed, fork PRs included: a response that is not
# recorded exits 4 and the job summary says how to record it), recording
# with the key on pushes to main. Add the key as the repository secret
# @KEY_ENV@. The response cache travels between runs with
# actions/cache: main saves it, pull requests restore main's latest.
name: gate

on:
  pull_request:
  push:
    branches: [main]

permissions:
  contents: read
  pull-requests: write # the verdict comment (a fork PR's token stays read-only: a warning, not a failure)

jobs:
  gate:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Restore the response cache
        uses: actions/cache/restore@v4
        with:
          path: evals/cache
          key: gate-cache-${{ github.sha }}
          restore-keys: gate-cache-
      - name: Gate the pull request (replay-only)
        if: github.event_name == 'pull_request'
        uses: gate-eval/gate@v0
        with:
          config: gate.yaml
          mode: replay-only
      - name: Record what is missing, then gate main
        if: github.event_name == 'push'
        uses: gate-eval/gate@v0
        env:
          @KEY_ENV@: ${{ secrets.@KEY_ENV@ }}
        with:
          config: gate.yaml
          mode: replay
          comment: 'off'
      - name: Save the response cache
        if: always() && github.event_name == 'push'
        uses: actions/cache/save@v4
        with:
          path: evals/cache
          key: gate-cache-${{ github.sha }}
)";
// clang-format on

} // namespace gate::init::templates
