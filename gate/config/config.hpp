#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gate/util/environment.hpp>

namespace gate::config {

// How the cache is used; see README "Cache modes".
enum class CacheMode { replay, replay_only, record, off };
std::string to_string(CacheMode m);
std::optional<CacheMode> parse_cache_mode(const std::string& s);

struct ModelConfig {
  std::string provider = "openai"; // a name in providers(): openai | anthropic | azure | gemini
  // The OpenAI request shape: "chat" (Chat Completions) or "responses" (the
  // Responses API). Anthropic speaks only its Messages API.
  std::string api = "chat";
  // Which OpenAI model family's request rules apply (model::wire_settings):
  // "auto" (by model.name: gpt-5*, o1*, o3*, o4* are reasoning models),
  // "reasoning" or "sampling", for a model whose name does not say (an
  // Azure deployment, a proxy's alias).
  std::string family = "auto";
  // Azure OpenAI only: "" = the v1 API (base URL {endpoint}/openai/v1, the
  // deployment in the body's model field); a version such as 2024-10-21 =
  // deployment URLs ({endpoint}/openai/deployments/{model.name}/...
  // ?api-version=...). Part of the endpoint path, so of the cache key.
  std::string api_version;
  // With provider anthropic and no explicit value, load() uses
  // https://api.anthropic.com and ANTHROPIC_API_KEY instead.
  std::string base_url = "https://api.openai.com/v1";
  // "" (model.api_key_env: null): no key is sent, for a server that needs
  // none (a local Ollama, vLLM or llama.cpp server).
  std::string api_key_env = "OPENAI_API_KEY";
  std::string key_alias = "default";       // a name for the key, stored in routes; never the key
  std::string name;                        // the model id sent upstream (required)
  std::optional<double> temperature = 0.0; // nullopt: not sent
  std::optional<double> top_p;
  std::optional<std::int64_t> seed;
  std::optional<std::int64_t> max_tokens = 512;
  // Provider-specific request fields (model.extra): a JSON object, as
  // canonical text ("" = none), merged into every request body and so into
  // the cache key. It may not set a field gate writes (request_fields()).
  std::string extra;
  double timeout_s = 60.0; // whole call deadline
  int max_retries = 3;
  // How long 429s are retried: for one call, and for the whole pool once no
  // call has had an answer other than a 429 for this long (an outage).
  double rate_limit_wait_s = 120.0;
  // The longest wait a server may ask for (Retry-After) that a retry
  // honours, as the official SDKs do (Anthropic's waits up to 60 s); a
  // longer one ends the call, errored with that reason.
  double max_retry_after_s = 60.0;
  std::filesystem::path ca_file; // extra trust anchors (PEM) for https; empty = the system store only
  bool stream = false;           // SSE answers (time to first token); stored in the plain form
  // Budgets shared by every worker (net/limiter.hpp); nullopt = unlimited.
  std::optional<double> requests_per_minute;
  std::optional<double> tokens_per_minute;
};

// The grader behind llm_judge checks: the same provider, base URL and key
// as `model`, its own model id and sampling.
struct JudgeConfig {
  std::string model; // "" = model.name
  std::optional<double> temperature = 0.0;
  std::int64_t max_tokens = 256;
};

// The prompt under test (docs/config.md "Prompts"): system and user
// templates, each inline or in a file (resolved against gate.yaml's
// directory); "" = none. Not part of the suite: editing one is an ordinary
// change, not a new suite version.
struct PromptConfig {
  std::string system, user;
  std::filesystem::path system_file, user_file;
};

struct CacheConfig {
  std::filesystem::path dir = ".gate/cache";
  CacheMode mode = CacheMode::replay;
  bool mode_set = false;           // false: the default applies (replay-only in CI without a key)
  std::vector<std::string> ignore; // JSON pointers removed from the request before hashing
  // The shared second level (docs/ci.md "Sharing a cache between runners"):
  // an http(s) base URL, "" = none; the variable whose value is sent as a
  // bearer token, "" = none; how long one request to it may take.
  std::string remote;
  std::string remote_auth_env;
  double remote_timeout_s = 5;
};

struct Thresholds {
  std::optional<double> max_success_drop_pp = 2.0;
  std::optional<double> max_consistency_gap_rise_pp = 5.0;
  std::optional<double> max_pass_k_drop_pp;
  std::optional<double> max_token_rise_pct;
  std::optional<double> max_p95_latency_rise_pct;
  std::optional<double> max_error_rate_rise_pp;
  std::optional<std::int64_t> max_new_failures; // opt-in strict rule on flips
  double alpha = 0.05;
  // Above this share of errored runs a report cannot stand for the suite
  // (METRICS.md "Measured runs"): run and check exit 3, compare says so.
  double max_errored_runs_pct = 5.0;
  // What an inconclusive comparison (no change could be significant) does.
  std::string on_inconclusive = "warn"; // pass | warn | fail
};

// Confirmation runs (METRICS.md "Confirmation"): when `gate check`'s
// verdict is in doubt, fresh runs of both sides of the tasks that decide it.
struct ConfirmConfig {
  int runs = 3;                 // the fewest fresh runs per side per task; 0 = off
  std::int64_t max_calls = 200; // the most fresh calls one confirmation makes
  // undecided: a verdict the first comparison left undecided (inconclusive,
  // or a gated row crossed its threshold without significance); flips: also
  // any flipped task, as --confirm does. docs/metrics.md "Confirmation".
  std::string when = "undecided";
};

struct Outputs {
  std::filesystem::path dir = ".gate/out";
  std::filesystem::path json = "report.json";   // relative to dir
  std::filesystem::path markdown = "report.md"; // "" = not written
  std::filesystem::path junit = "report.xml";   // "" = not written
};

// `--shard i/n`: slice i (1-based) of n. A task's slice is a hash of its id,
// so adding a task moves no other task to another slice.
struct Shard {
  int index = 1;
  int count = 1;
};

struct Config {
  std::filesystem::path file;  // the gate.yaml read; paths below are relative to its directory
  std::filesystem::path suite; // suite directory
  std::string suite_version;   // "" = latest
  std::string suite_sha256;    // "" = not pinned; else 64 lowercase hex digits
  ModelConfig model;
  JudgeConfig judge;
  PromptConfig prompt;
  int runs = 3; // k
  int concurrency = 4;
  double token_band_pct = 25.0;
  bool include_polluted = false; // count route-polluted tasks in the consistency gap
  // USD per million tokens by model name (`pricing`), as canonical JSON text
  // ({"<model>": {"prompt": p, "completion": c}}; "" = none): the report's
  // cost numbers and the `cost` check (METRICS.md "Cost").
  std::string pricing;
  std::filesystem::path agent_workdir; // agent tasks' work copies go here; "" = the system temp directory
  CacheConfig cache;
  Thresholds thresholds;
  ConfirmConfig confirm;
  std::filesystem::path baseline; // "" = none
  Outputs outputs;
  // Selection (CLI only).
  std::vector<std::string> filter;   // glob patterns on task id; any match selects
  std::optional<std::size_t> sample; // run a seeded sample of N tasks
  std::uint64_t sample_seed = 0;
  std::optional<Shard> shard; // run only this deterministic slice of the tasks

  // Where each effective value came from: "default", "gate.yaml:12",
  // "--runs", "default (CI set, no $OPENAI_API_KEY)". Keyed by the dotted
  // key name; the CLI-only selection uses "filter", "sample", "sample_seed".
  std::map<std::string, std::string> origin;
};

// One row per configuration key: the single table that the loader, `gate
// config show` and docs/config.md agree on (a unit test checks).
struct KeyInfo {
  std::string key;      // dotted, e.g. "model.temperature"
  std::string type;     // e.g. "string", "path", "integer 1..1000", "number 0..2 or null", "bool",
                        // "list of strings", "one of replay|replay-only|record|off"
  std::string fallback; // the default, as text ("(required)" for required keys)
  std::string help;
};
const std::vector<KeyInfo>& key_table();

// The providers gate speaks (model.provider) and what each implies for
// model.base_url and model.api_key_env when the file gives neither: the one
// list behind the loader's defaults, the key's choices and `gate init`.
// azure and gemini speak OpenAI's request shapes (model::dialect); azure
// has no default base URL (each resource has its own endpoint).
struct Provider {
  std::string name;
  std::string base_url; // "" = none: the file must set model.base_url
  std::string api_key_env;
};
const std::vector<Provider>& providers();
const Provider* find_provider(std::string_view name); // nullptr when gate does not speak it
// The request body fields gate itself writes in any dialect (model/api.cpp,
// model/responses.cpp, with_streaming): model.extra may not set them, so
// that what gate pins (sampling, limits, the conversation) stays pinned.
const std::vector<std::string>& request_fields();

// What makes a URL carry a secret ("" when nothing does): a user:password@
// part, or a query parameter that holds a key (key=, api_key=, token=, sig=,
// …). Never the secret itself: the text is safe to print. A URL in gate.yaml
// is committed; the key belongs in the environment.
std::string credentials_in_url(std::string_view url);

// Loads gate.yaml. Unknown keys, duplicate keys, wrong types, tabs and YAML
// syntax errors are Error(bad_input) "file:line:col: what was expected".
// Relative paths are resolved against the file's directory.
Config load(const std::filesystem::path& file);

// Overrides given on the command line; each records its origin ("--runs",
// "--concurrency", "--mode", "--filter", "--sample", "--sample-seed", "--shard",
// "--baseline", "--out-dir"). Paths are taken as given (relative to the
// working directory). Values are checked against the same ranges as the file.
struct Overrides {
  std::optional<int> runs;
  std::optional<int> concurrency;
  std::optional<std::string> mode;
  std::vector<std::string> filter;
  std::optional<std::int64_t> sample; // signed, so that "-1" is refused rather than wrapped
  std::optional<std::uint64_t> sample_seed;
  std::optional<Shard> shard;
  std::optional<std::filesystem::path> baseline;
  std::optional<std::filesystem::path> out_dir;
};
void apply(Config& cfg, const Overrides& o);

// Resolves the cache mode default: replay-only when CI is set and the key's
// variable is absent from `env`, replay otherwise. Call after apply().
void resolve_defaults(Config& cfg, const Environment& env);

// The effective configuration as YAML-like "key: value  # origin" lines, in
// key_table() order, then the CLI-only selection when set. Redacted.
std::string show(const Config& cfg);

// The report's copy of the effective configuration as nested JSON
// ({"model": {"name": ...}}): the keys that shape the numbers (Row::reported;
// no path on this machine), the judge model resolved, the shard when set.
// Holds the key's variable name and alias only; redacted.
boost::json::object to_json(const Config& cfg);

// An output file (outputs.json/markdown/junit) resolved against outputs.dir;
// "" stays "" (not written), an absolute name is kept.
std::filesystem::path output_path(const Outputs& o, const std::filesystem::path& name);

} // namespace gate::config
