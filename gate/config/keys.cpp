#include <gate/config/keys.hpp>

#include <algorithm>
#include <cctype>

#include <gate/util/format.hpp>
#include <gate/util/json.hpp>
#include <gate/util/text.hpp>

namespace gate::config {

std::string to_string(CacheMode m) {
  switch (m) {
  case CacheMode::replay: return "replay";
  case CacheMode::replay_only: return "replay-only";
  case CacheMode::record: return "record";
  case CacheMode::off: return "off";
  }
  return "replay";
}

std::optional<CacheMode> parse_cache_mode(const std::string& s) {
  if (s == "replay") return CacheMode::replay;
  if (s == "replay-only") return CacheMode::replay_only;
  if (s == "record") return CacheMode::record;
  if (s == "off") return CacheMode::off;
  return std::nullopt;
}

namespace detail {
namespace {

namespace fs = std::filesystem;

// Conversions between Config members and Values. The loader only calls a
// setter after check() accepted the value, so the variant holds the
// alternative the member's kind implies.
Value to_value(const std::string& s) { return s; }
Value to_value(const fs::path& p) { return p.string(); }
Value to_value(int i) { return std::int64_t{i}; }
Value to_value(std::int64_t i) { return i; }
Value to_value(double d) { return d; }
Value to_value(bool b) { return b; }
Value to_value(const std::vector<std::string>& l) { return l; }
template <class T> Value to_value(const std::optional<T>& o) { return o ? to_value(*o) : Value{}; }

void from_value(const Value& v, std::string& out) {
  out = std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : std::string();
}
void from_value(const Value& v, fs::path& out) {
  out = std::holds_alternative<std::string>(v) ? fs::path(std::get<std::string>(v)) : fs::path();
}
void from_value(const Value& v, int& out) { out = static_cast<int>(std::get<std::int64_t>(v)); }
void from_value(const Value& v, std::int64_t& out) { out = std::get<std::int64_t>(v); }
void from_value(const Value& v, double& out) { out = std::get<double>(v); }
void from_value(const Value& v, bool& out) { out = std::get<bool>(v); }
void from_value(const Value& v, std::vector<std::string>& out) {
  out = std::get<std::vector<std::string>>(v);
}
template <class T> void from_value(const Value& v, std::optional<T>& out) {
  if (std::holds_alternative<std::monostate>(v)) {
    out.reset();
    return;
  }
  T t{};
  from_value(v, t);
  out = t;
}

struct Spec {
  bool nullable = false;
  bool required = false;
  Range range = {};
  std::vector<std::string> choices = {};
  std::function<std::string(const Value&)> extra = {};
  bool reported = true;
  // A table (pricing): each row's fields; a trailing '?' marks one a row may leave out.
  std::vector<std::string> table_fields = {};
};

// `access` is a generic lambda returning a reference to the member, so one
// expression serves both the setter and the getter.
template <class Access> Row make(std::string key, Kind kind, std::string help, Access access, Spec s = {}) {
  Row r;
  r.info.key = std::move(key);
  r.info.help = std::move(help);
  r.kind = kind;
  r.nullable = s.nullable;
  r.required = s.required;
  r.range = s.range;
  r.choices = std::move(s.choices);
  r.extra = std::move(s.extra);
  r.reported = s.reported;
  r.table_fields = std::move(s.table_fields);
  r.set = [access](Config& c, const Value& v) { from_value(v, access(c)); };
  r.get = [access](const Config& c) { return to_value(access(c)); };
  return r;
}

const std::string* as_string(const Value& v) { return std::get_if<std::string>(&v); }

// model.extra: a field gate writes itself would be overwritten, or would
// overwrite what the other model.* keys pin.
std::string gate_owned_fields(const Value& v) {
  const std::string* text = as_string(v);
  if (text == nullptr || text->empty()) return "";
  std::string owned;
  const boost::json::value extra = json::parse_strict(*text, "model.extra");
  for (const auto& [key, value] : extra.as_object()) {
    const auto& fields = request_fields();
    if (std::find(fields.begin(), fields.end(), std::string_view(key)) != fields.end())
      owned += (owned.empty() ? "" : ", ") + quote_excerpt(key);
  }
  if (owned.empty()) return "";
  return "sets " + owned +
         ", which gate writes itself (use the model.* keys: model.temperature, "
         "model.max_tokens, ...; the request fields gate owns are in docs/config.md)";
}

std::vector<std::string> provider_names() {
  std::vector<std::string> out;
  for (const Provider& p : providers())
    out.push_back(p.name);
  return out;
}

std::string non_empty(const Value& v) {
  const std::string* s = as_string(v);
  return s && s->empty() ? "expected a non-empty value" : "";
}

std::string sha256_hex(const Value& v) {
  const std::string* s = as_string(v);
  if (!s || s->empty()) return "";
  bool ok = s->size() == 64 && std::all_of(s->begin(), s->end(), [](char c) {
              return std::isxdigit(static_cast<unsigned char>(c));
            });
  return ok ? "" : "expected 64 hex digits (the suite version's sha256), got " + quote_excerpt(*s);
}

std::string http_url(const Value& v) {
  const std::string* s = as_string(v);
  if (!s) return "";
  for (std::string_view scheme : {"http://", "https://"}) {
    if (s->size() > scheme.size() && s->compare(0, scheme.size(), scheme) == 0) {
      const std::string secret = credentials_in_url(*s);
      if (secret.empty()) return "";
      // Not quoted back: the text holds the secret.
      return "expected a URL without credentials, got one with " + secret +
             ": gate.yaml is committed; put the key in the environment variable model.api_key_env names "
             "(cache.remote: cache.remote_auth_env)";
    }
  }
  return "expected a URL starting with http:// or https://, got " + quote_excerpt(*s);
}

} // namespace
} // namespace detail

std::string credentials_in_url(std::string_view url) {
  const std::size_t scheme = url.find("://");
  const std::size_t authority = scheme == std::string_view::npos ? 0 : scheme + 3;
  const std::size_t path = url.find_first_of("/?#", authority);
  const std::string_view host =
      url.substr(authority, path == std::string_view::npos ? url.npos : path - authority);
  if (host.find('@') != std::string_view::npos) return "a user:password@ part";
  const std::size_t q = url.find('?');
  if (q == std::string_view::npos) return "";
  std::string_view query = url.substr(q + 1);
  query = query.substr(0, query.find('#'));
  static constexpr std::string_view k_secret_params[] = {
      "key", "api_key", "apikey", "api-key", "access_token", "token", "sig", "secret", "password"};
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    std::string name(pair.substr(0, pair.find('=')));
    for (char& c : name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (std::string_view p : k_secret_params)
      if (name == p) return "the query parameter " + name + "=";
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return "";
}

namespace detail {
namespace {

std::string env_name(const Value& v) {
  const std::string* s = as_string(v);
  if (!s) return "";
  bool ok = !s->empty() && !std::isdigit(static_cast<unsigned char>((*s)[0])) &&
            std::all_of(s->begin(), s->end(),
                        [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  return ok ? "" : "expected an environment variable name (letters, digits, _), got " + quote_excerpt(*s);
}

// A key whose "" means none (cache.remote, cache.remote_auth_env): `check`
// for any other text.
std::function<std::string(const Value&)> empty_or(std::string (*check)(const Value&)) {
  return [check](const Value& v) {
    const std::string* s = as_string(v);
    return s && s->empty() ? std::string() : check(v);
  };
}

// Azure's api-version travels in the query string: a date and an optional
// "-preview", nothing that would need escaping.
std::string api_version(const Value& v) {
  const std::string* s = as_string(v);
  if (!s || s->empty()) return "";
  bool ok = std::all_of(s->begin(), s->end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  });
  return ok ? ""
            : "expected an Azure api-version such as 2024-10-21 (letters, digits, - . _), got " +
                  quote_excerpt(*s);
}

// RFC 6901: "" or "/"-separated tokens where "~" is only "~0" or "~1".
std::string json_pointers(const Value& v) {
  const auto* l = std::get_if<std::vector<std::string>>(&v);
  if (!l) return "";
  for (const std::string& p : *l) {
    bool ok = p.empty() || p[0] == '/';
    for (std::size_t i = 0; ok && i < p.size(); ++i) {
      if (p[i] == '~') ok = i + 1 < p.size() && (p[i + 1] == '0' || p[i + 1] == '1');
    }
    if (!ok) return "expected JSON pointers such as \"/user\" (RFC 6901), got " + quote_excerpt(p);
  }
  return "";
}

constexpr Range k_non_negative{0, std::numeric_limits<double>::infinity(), false};
constexpr Range k_positive{0, std::numeric_limits<double>::infinity(), true};

std::vector<Row> build_rows() {
  std::vector<Row> r;
  // clang-format off
  r.push_back(make("suite.path", Kind::path, "suite directory",
      [](auto& c) -> auto& { return c.suite; }, {.required = true, .extra = non_empty, .reported = false}));
  r.push_back(make("suite.version", Kind::string, "pinned suite version; \"\" or null = the suite's latest",
      [](auto& c) -> auto& { return c.suite_version; }, {.nullable = true, .reported = false}));
  r.push_back(make("suite.sha256", Kind::string, "optional pin: must equal the version's sha256; \"\" or null = not pinned",
      [](auto& c) -> auto& { return c.suite_sha256; }, {.nullable = true, .extra = sha256_hex, .reported = false}));
  r.back().set = [](Config& c, const Value& v) {
    from_value(v, c.suite_sha256);
    for (char& ch : c.suite_sha256) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  };
  r.push_back(make("model.provider", Kind::choice, "API dialect spoken upstream",
      [](auto& c) -> auto& { return c.model.provider; }, {.choices = provider_names()}));
  r.push_back(make("model.api", Kind::choice, "OpenAI request shape: chat (Chat Completions) or responses (the Responses API); anthropic and gemini take chat only",
      [](auto& c) -> auto& { return c.model.api; }, {.choices = {"chat", "responses"}}));
  r.push_back(make("model.family", Kind::choice, "OpenAI model family whose request rules apply: auto (by model.name: gpt-5*, o1*, o3*, o4* are reasoning models), reasoning (max_completion_tokens, no temperature or top_p) or sampling, for a deployment or alias whose name does not say",
      [](auto& c) -> auto& { return c.model.family; }, {.choices = {"auto", "reasoning", "sampling"}}));
  r.push_back(make("model.api_version", Kind::string, "azure only: the api-version of deployment URLs ({endpoint}/openai/deployments/{model.name}/...?api-version=...), e.g. 2024-10-21; \"\" or null = the v1 API (model.base_url {endpoint}/openai/v1)",
      [](auto& c) -> auto& { return c.model.api_version; }, {.nullable = true, .extra = api_version}));
  r.push_back(make("model.base_url", Kind::string, "API base URL; the default follows model.provider (docs/config.md \"Providers\"; azure has none)",
      [](auto& c) -> auto& { return c.model.base_url; }, {.extra = http_url}));
  r.push_back(make("model.api_key_env", Kind::string, "name of the environment variable holding the key; the default follows model.provider; null = no key sent (a local server)",
      [](auto& c) -> auto& { return c.model.api_key_env; }, {.nullable = true, .extra = env_name}));
  r.push_back(make("model.key_alias", Kind::string, "a name for the key, stored in routes instead of the key",
      [](auto& c) -> auto& { return c.model.key_alias; }, {.extra = non_empty}));
  r.push_back(make("model.name", Kind::string, "model id sent upstream",
      [](auto& c) -> auto& { return c.model.name; }, {.required = true, .extra = non_empty}));
  r.push_back(make("model.temperature", Kind::number, "sampling temperature; null = not sent",
      [](auto& c) -> auto& { return c.model.temperature; }, {.nullable = true, .range = {0, 2}}));
  r.push_back(make("model.top_p", Kind::number, "nucleus sampling; null = not sent",
      [](auto& c) -> auto& { return c.model.top_p; }, {.nullable = true, .range = {0, 1}}));
  r.push_back(make("model.seed", Kind::integer, "sampling seed; null = not sent",
      [](auto& c) -> auto& { return c.model.seed; }, {.nullable = true}));
  r.push_back(make("model.max_tokens", Kind::integer, "completion token limit; null = not sent (Anthropic requires one: null sends 1024, which the route records)",
      [](auto& c) -> auto& { return c.model.max_tokens; }, {.nullable = true, .range = {1, 1e9}}));
  r.push_back(make("model.extra", Kind::object, "provider-specific request fields merged into every request body (and so into the cache key), e.g. reasoning_effort; not a field gate sets itself; {} or null = none",
      [](auto& c) -> auto& { return c.model.extra; }, {.nullable = true, .extra = gate_owned_fields}));
  r.push_back(make("model.timeout", Kind::number, "deadline in seconds for one whole call",
      [](auto& c) -> auto& { return c.model.timeout_s; }, {.range = k_positive}));
  r.push_back(make("model.max_retries", Kind::integer, "retries after a retryable failure; a 429 is retried for up to model.rate_limit_wait_s instead",
      [](auto& c) -> auto& { return c.model.max_retries; }, {.range = {0, 20}}));
  r.push_back(make("model.rate_limit_wait_s", Kind::number, "seconds a call keeps retrying 429s; when no call of the run got past a 429 for this long, every call stops retrying them",
      [](auto& c) -> auto& { return c.model.rate_limit_wait_s; }, {.range = {0, 3600, true}}));
  r.push_back(make("model.max_retry_after_s", Kind::number, "the longest wait a server may ask for (Retry-After) that a retry honours; a longer one errors the run with that reason (a 429's waits also stay within model.rate_limit_wait_s)",
      [](auto& c) -> auto& { return c.model.max_retry_after_s; }, {.range = {0, 3600}}));
  r.push_back(make("model.ca_file", Kind::path, "extra trusted CA certificates (PEM) for https, besides the system store; \"\" or null = none",
      [](auto& c) -> auto& { return c.model.ca_file; }, {.nullable = true, .reported = false}));
  r.push_back(make("model.stream", Kind::boolean, "ask for a streamed (SSE) answer; records time to first token",
      [](auto& c) -> auto& { return c.model.stream; }));
  r.push_back(make("model.requests_per_minute", Kind::number, "request budget shared by all workers; null = unlimited",
      [](auto& c) -> auto& { return c.model.requests_per_minute; }, {.nullable = true, .range = k_positive}));
  r.push_back(make("model.tokens_per_minute", Kind::number, "token budget (prompt estimate + max_tokens) shared by all workers; null = unlimited",
      [](auto& c) -> auto& { return c.model.tokens_per_minute; }, {.nullable = true, .range = k_positive}));
  r.push_back(make("judge.model", Kind::string, "model id for llm_judge checks, same provider and key; \"\" or null = model.name",
      [](auto& c) -> auto& { return c.judge.model; }, {.nullable = true}));
  r.push_back(make("judge.temperature", Kind::number, "the judge's sampling temperature; null = not sent",
      [](auto& c) -> auto& { return c.judge.temperature; }, {.nullable = true, .range = {0, 2}}));
  r.push_back(make("judge.max_tokens", Kind::integer, "the judge's completion token limit",
      [](auto& c) -> auto& { return c.judge.max_tokens; }, {.range = {16, 1e9}}));
  r.push_back(make("prompt.system", Kind::string, "system prompt template, inline ({{var}} from each case's vars); \"\" or null = none",
      [](auto& c) -> auto& { return c.prompt.system; }, {.nullable = true, .reported = false}));
  r.push_back(make("prompt.system_file", Kind::path, "system prompt template file, e.g. prompts/support.md; not with prompt.system",
      [](auto& c) -> auto& { return c.prompt.system_file; }, {.nullable = true, .reported = false}));
  r.push_back(make("prompt.user", Kind::string, "user message template, inline, for cases without an input; \"\" or null = none",
      [](auto& c) -> auto& { return c.prompt.user; }, {.nullable = true, .reported = false}));
  r.push_back(make("prompt.user_file", Kind::path, "user message template file; not with prompt.user",
      [](auto& c) -> auto& { return c.prompt.user_file; }, {.nullable = true, .reported = false}));
  r.push_back(make("runs", Kind::integer, "runs per task (k)",
      [](auto& c) -> auto& { return c.runs; }, {.range = {1, 1000}}));
  r.push_back(make("concurrency", Kind::integer, "tasks in flight at once",
      [](auto& c) -> auto& { return c.concurrency; }, {.range = {1, 1024}}));
  r.push_back(make("token_band_pct", Kind::number, "runs outside +-this % of the task's median tokens are flagged",
      [](auto& c) -> auto& { return c.token_band_pct; }, {.range = k_positive}));
  r.push_back(make("include_polluted", Kind::boolean, "count route-polluted tasks in the consistency gap",
      [](auto& c) -> auto& { return c.include_polluted; }));
  r.push_back(make("pricing", Kind::object, "USD per million tokens by model name, e.g. gpt-4o-mini: {prompt: 0.15, completion: 0.6, cached_prompt: 0.075}: the report's cost per task and suite, and the cost check; cached_prompt prices the prompt tokens the provider's cache served, cache_write those written to it (Anthropic), each at prompt when left out; a model without a row has no cost (n/a); {} or null = no cost",
      [](auto& c) -> auto& { return c.pricing; }, {.nullable = true, .range = k_non_negative, .table_fields = {"prompt", "completion", "cached_prompt?", "cache_write?"}}));
  r.push_back(make("agent.workdir", Kind::path, "where agent tasks get their work copies; \"\" or null = the system temp directory ($TMPDIR)",
      [](auto& c) -> auto& { return c.agent_workdir; }, {.nullable = true, .reported = false}));
  r.push_back(make("cache.dir", Kind::path, "cache directory",
      [](auto& c) -> auto& { return c.cache.dir; }, {.extra = non_empty, .reported = false}));
  r.push_back(Row{});
  r.back().info = {"cache.mode", "", "", "cache use; default replay, or replay-only when CI is set and the key is not"};
  r.back().kind = Kind::choice;
  r.back().choices = {"replay", "replay-only", "record", "off"};
  r.back().set = [](Config& c, const Value& v) {
    c.cache.mode = parse_cache_mode(std::get<std::string>(v)).value_or(CacheMode::replay);
    c.cache.mode_set = true;
  };
  r.back().get = [](const Config& c) { return Value{to_string(c.cache.mode)}; };
  r.push_back(make("cache.ignore", Kind::string_list, "JSON pointers removed from the request before hashing",
      [](auto& c) -> auto& { return c.cache.ignore; }, {.extra = json_pointers}));
  r.push_back(make("cache.remote", Kind::string, "a cache shared by runners, behind cache.dir: base URL of a server taking GET/PUT of <key[0:2]>/<key>.entry (nginx dav, WebDAV); \"\" or null = none",
      [](auto& c) -> auto& { return c.cache.remote; }, {.nullable = true, .extra = empty_or(http_url), .reported = false}));
  r.push_back(make("cache.remote_auth_env", Kind::string, "environment variable whose value cache.remote gets as Authorization: Bearer; \"\" or null = none",
      [](auto& c) -> auto& { return c.cache.remote_auth_env; }, {.nullable = true, .extra = empty_or(env_name), .reported = false}));
  r.push_back(make("cache.remote_timeout_s", Kind::number, "seconds one request to cache.remote may take (connecting: at most 2); the first failure turns the remote off for the run",
      [](auto& c) -> auto& { return c.cache.remote_timeout_s; }, {.range = {0, 600, true}, .reported = false}));
  r.push_back(make("thresholds.max_success_drop_pp", Kind::number, "gate fails when the success rate drops by at least this many pp (and significantly); null = not checked",
      [](auto& c) -> auto& { return c.thresholds.max_success_drop_pp; }, {.nullable = true, .range = k_non_negative}));
  r.push_back(make("thresholds.max_consistency_gap_rise_pp", Kind::number, "gate fails when the consistency gap rises by at least this many pp (and significantly)",
      [](auto& c) -> auto& { return c.thresholds.max_consistency_gap_rise_pp; }, {.nullable = true, .range = k_non_negative}));
  r.push_back(make("thresholds.max_pass_k_drop_pp", Kind::number, "gate fails when pass^k drops by at least this many pp (and significantly)",
      [](auto& c) -> auto& { return c.thresholds.max_pass_k_drop_pp; }, {.nullable = true, .range = k_non_negative}));
  r.push_back(make("thresholds.max_token_rise_pct", Kind::number, "gate fails when tokens per task rise by at least this % (and significantly)",
      [](auto& c) -> auto& { return c.thresholds.max_token_rise_pct; }, {.nullable = true, .range = k_non_negative}));
  r.push_back(make("thresholds.max_p95_latency_rise_pct", Kind::number, "gate fails when p95 latency rises by at least this % (and significantly)",
      [](auto& c) -> auto& { return c.thresholds.max_p95_latency_rise_pct; }, {.nullable = true, .range = k_non_negative}));
  r.push_back(make("thresholds.max_error_rate_rise_pp", Kind::number, "gate fails when the error rate rises by at least this many pp (and significantly)",
      [](auto& c) -> auto& { return c.thresholds.max_error_rate_rise_pp; }, {.nullable = true, .range = k_non_negative}));
  r.push_back(make("thresholds.max_new_failures", Kind::integer, "strict rule: gate fails when more than this many tasks flip; for deterministic runs",
      [](auto& c) -> auto& { return c.thresholds.max_new_failures; }, {.nullable = true, .range = k_non_negative}));
  r.push_back(make("thresholds.alpha", Kind::number, "significance level for the whole gate (Holm-adjusted)",
      [](auto& c) -> auto& { return c.thresholds.alpha; }, {.range = {0, 0.5, true}}));
  r.push_back(make("thresholds.max_errored_runs_pct", Kind::number, "above this % of errored runs (rate limits, timeouts, ...) nothing is judged: run and check exit 3",
      [](auto& c) -> auto& { return c.thresholds.max_errored_runs_pct; }, {.range = {0, 100, false}}));
  r.push_back(make("thresholds.on_inconclusive", Kind::choice, "when no change could be significant (too few changed tasks): pass, warn (exit 0 with a warning) or fail (exit 1)",
      [](auto& c) -> auto& { return c.thresholds.on_inconclusive; }, {.choices = {"pass", "warn", "fail"}}));
  r.push_back(make("confirm.runs", Kind::integer, "gate check: at least this many fresh runs per side of the tasks that decide a verdict in doubt (more, up to 10, where fewer could not decide); 0 = off",
      [](auto& c) -> auto& { return c.confirm.runs; }, {.range = {0, 100}, .reported = false}));
  r.push_back(make("confirm.when", Kind::choice, "gate check: which verdicts are confirmed: undecided (inconclusive, or a gated row crossed its threshold without significance) or flips (also any flipped task, as --confirm N)",
      [](auto& c) -> auto& { return c.confirm.when; }, {.choices = {"undecided", "flips"}, .reported = false}));
  r.push_back(make("confirm.max_calls", Kind::integer, "the most fresh calls one confirmation makes, both sides and judge calls included",
      [](auto& c) -> auto& { return c.confirm.max_calls; }, {.range = {1, 1000000}, .reported = false}));
  r.push_back(make("baseline", Kind::path, "baseline report to compare with; \"\" or null = none",
      [](auto& c) -> auto& { return c.baseline; }, {.nullable = true, .reported = false}));
  r.push_back(make("outputs.dir", Kind::path, "directory for the reports",
      [](auto& c) -> auto& { return c.outputs.dir; }, {.extra = non_empty, .reported = false}));
  r.push_back(make("outputs.json", Kind::out_file, "JSON report, in outputs.dir",
      [](auto& c) -> auto& { return c.outputs.json; }, {.extra = non_empty, .reported = false}));
  r.push_back(make("outputs.markdown", Kind::out_file, "Markdown report, in outputs.dir; \"\" or null = not written",
      [](auto& c) -> auto& { return c.outputs.markdown; }, {.nullable = true, .reported = false}));
  r.push_back(make("outputs.junit", Kind::out_file, "JUnit XML, in outputs.dir; \"\" or null = not written",
      [](auto& c) -> auto& { return c.outputs.junit; }, {.nullable = true, .reported = false}));
  // clang-format on

  const Config defaults;
  for (Row& row : r) {
    // The table's type is describe() without its article: "integer in 1..1000".
    std::string d = describe(row);
    for (std::string_view article : {"a ", "an "}) {
      if (d.starts_with(article)) d.erase(0, article.size());
    }
    row.info.type = d;
    row.info.fallback = row.required ? "(required)" : shown(row, row.get(defaults));
  }
  return r;
}

} // namespace

std::string range_text(const Range& r) {
  const bool has_min = r.min > -std::numeric_limits<double>::infinity();
  const bool has_max = r.max < std::numeric_limits<double>::infinity();
  if (has_min && has_max && !r.min_open) return " in " + number_text(r.min) + ".." + number_text(r.max);
  std::string out;
  if (has_min) out += (r.min_open ? " > " : " >= ") + number_text(r.min);
  if (has_max) out += (has_min ? " and <= " : " <= ") + number_text(r.max);
  return out;
}

bool in_range(const Range& r, double x) {
  if (r.min_open ? !(x > r.min) : !(x >= r.min)) return false;
  return x <= r.max;
}

const std::vector<Row>& rows() {
  static const std::vector<Row> table = build_rows();
  return table;
}

const Row* find_row(std::string_view key) {
  for (const Row& r : rows()) {
    if (r.info.key == key) return &r;
  }
  return nullptr;
}

std::string describe(const Row& r) {
  std::string d;
  switch (r.kind) {
  case Kind::string: d = "a string"; break;
  case Kind::path: d = "a path"; break;
  case Kind::out_file: d = "a file name"; break;
  case Kind::integer: d = "an integer" + range_text(r.range); break;
  case Kind::number: d = "a number" + range_text(r.range); break;
  case Kind::boolean: d = "true or false"; break;
  case Kind::string_list: d = "a list of strings"; break;
  case Kind::object:
    d = "a mapping";
    if (!r.table_fields.empty()) {
      // "{prompt, completion; optional cached_prompt, cache_write}"
      std::string required, optional;
      for (const std::string& f : r.table_fields)
        (f.ends_with('?') ? optional : required) +=
            ((f.ends_with('?') ? optional : required).empty() ? "" : ", ") +
            (f.ends_with('?') ? f.substr(0, f.size() - 1) : f);
      d += " of names to {" + required + (optional.empty() ? "" : "; optional " + optional) +
           "}, each a number" + range_text(r.range);
    }
    break;
  case Kind::choice:
    d = "one of ";
    for (std::size_t i = 0; i < r.choices.size(); ++i)
      d += (i ? "|" : "") + r.choices[i];
    break;
  }
  if (r.nullable) d += " or null";
  return d;
}

std::string check(const Row& r, const Value& v) {
  // Strings are always quoted here, so that "got fast" cannot read as prose.
  const std::string* text = std::get_if<std::string>(&v);
  const std::string expected =
      "expected " + describe(r) + ", got " + (text ? quote_excerpt(*text) : render(v));
  if (std::holds_alternative<std::monostate>(v)) return r.nullable ? "" : expected;
  switch (r.kind) {
  case Kind::string:
  case Kind::path:
    if (!std::holds_alternative<std::string>(v)) return expected;
    break;
  case Kind::out_file:
    // A name inside outputs.dir: "../x" or "/x" would write elsewhere.
    if (!text || text->find('/') != std::string::npos || *text == "." || *text == "..") return expected;
    break;
  case Kind::choice:
    if (!text) return expected;
    if (std::find(r.choices.begin(), r.choices.end(), *text) == r.choices.end()) {
      const std::string near = nearest_name(*text, r.choices);
      return near.empty() ? expected : expected + "; did you mean \"" + near + "\"?";
    }
    break;
  case Kind::integer: {
    const auto* i = std::get_if<std::int64_t>(&v);
    if (!i || !in_range(r.range, static_cast<double>(*i))) return expected;
    break;
  }
  case Kind::number: {
    const auto* d = std::get_if<double>(&v);
    if (!d || !in_range(r.range, *d)) return expected;
    break;
  }
  case Kind::boolean:
    if (!std::holds_alternative<bool>(v)) return expected;
    break;
  case Kind::string_list:
    if (!std::holds_alternative<std::vector<std::string>>(v)) return expected;
    break;
  case Kind::object:
    // The loader makes the canonical text from a mapping; nothing else sets it.
    if (!text || (!text->empty() && text->front() != '{')) return expected;
    break;
  }
  return r.extra ? r.extra(v) : "";
}

std::string number_text(double d) {
  std::string out;
  json::append_number(d, out);
  return out;
}

namespace {

// A string prints bare when reading it back as YAML gives the same string.
bool plain_safe(const std::string& s) {
  if (s.empty() || s == "true" || s == "false" || s == "null" || s == "~") return false;
  if (!std::isalpha(static_cast<unsigned char>(s[0])) && s[0] != '_' && s[0] != '.' && s[0] != '/')
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_./:@+-").find(c) != std::string_view::npos;
  });
}

} // namespace

std::string render(const Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return "null";
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(&v)) return number_text(*d);
  if (const std::string* s = std::get_if<std::string>(&v))
    return plain_safe(*s) ? *s : quote_excerpt(*s, 4096);
  std::string out = "[";
  for (const std::string& s : std::get<std::vector<std::string>>(v)) {
    if (out.size() > 1) out += ", ";
    out += quote_excerpt(s, 4096);
  }
  return out + "]";
}

std::string shown(const Row& r, const Value& v) {
  if (r.kind != Kind::object) return render(v);
  const std::string* text = std::get_if<std::string>(&v);
  return text && !text->empty() ? *text : "{}";
}

} // namespace detail

const std::vector<KeyInfo>& key_table() {
  static const std::vector<KeyInfo> table = [] {
    std::vector<KeyInfo> t;
    for (const detail::Row& r : detail::rows())
      t.push_back(r.info);
    return t;
  }();
  return table;
}

} // namespace gate::config
