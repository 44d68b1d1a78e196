#include <gate/report/report.hpp>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include <gate/util/json.hpp>
#include <gate/util/parallel.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

// Layout of the file (docs/report-schema.md): the header fields and "stats"
// one per line, then "tasks" with one task per line, so that a baseline's
// git diff shows one line per changed task. Keys are written in a fixed
// order by hand rather than through boost::json::serialize, which would
// follow insertion order of a value we would first have to build.
namespace gate::report {

namespace {

// A JSON string literal that is valid UTF-8 whatever the input: invalid
// sequences become U+FFFD. One pass that copies clean spans in bulk; this
// is the hot loop of a large report (json::append_quoted goes byte by byte
// and would need a separate validation pass).
void escaped(std::string_view s, std::string& out) {
  static constexpr char k_hex[] = "0123456789abcdef";
  out.push_back('"');
  const char* p = s.data();
  const char* end = p + s.size();
  const char* clean = p;
  while (p < end) {
    unsigned char c = static_cast<unsigned char>(*p);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++p;
      continue;
    }
    out.append(clean, p);
    if (c < 0x80) {
      switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out.push_back(k_hex[c >> 4]);
        out.push_back(k_hex[c & 0xf]);
      }
      ++p;
    } else {
      std::size_t len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
      if (len != 0 && static_cast<std::size_t>(end - p) >= len && valid_utf8(std::string_view(p, len))) {
        out.append(p, len);
        p += len;
      } else {
        out += "\xEF\xBF\xBD"; // U+FFFD
        ++p;
      }
    }
    clean = p;
  }
  out.append(clean, p);
  out.push_back('"');
}

// Strings are the only place upstream data (answers, check details, error
// messages) reaches the file, so every one is redacted; contains_secret
// returns at once when no secret is registered, keeping the common path
// free of allocations.
void str(std::string_view s, std::string& out) {
  if (contains_secret(s))
    escaped(redact(s), out);
  else
    escaped(s, out);
}

void i64(std::int64_t v, std::string& out) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

void num(double d, std::string& out) { json::append_number(d, out); }

void boolean(bool b, std::string& out) { out += b ? "true" : "false"; }

void doubles(const std::vector<double>& v, std::string& out) {
  out.push_back('[');
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i != 0) out.push_back(',');
    num(v[i], out);
  }
  out.push_back(']');
}

void strings(const std::vector<std::string>& v, std::string& out) {
  out.push_back('[');
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i != 0) out.push_back(',');
    str(v[i], out);
  }
  out.push_back(']');
}

void route(const results::Route& r, std::string& out) {
  out.push_back('{');
  bool first = true;
  for (const auto& [k, v] : r) {
    if (!first) out.push_back(',');
    first = false;
    str(k, out);
    out.push_back(':');
    str(v, out);
  }
  out.push_back('}');
}

// Config is free-form JSON; written with sorted keys (canonical order) and
// every string, keys included, redacted.
// Free-form JSON (the effective config) in canonical form, redacted as a
// whole: it holds no hashes a secret's tail could collide with.
void value(const boost::json::value& v, std::string& out) { out += redact(json::canonical(v)); }

void rate_summary(const metrics::RateSummary& s, std::string& out) {
  out += "{\"tasks\":";
  i64(s.tasks, out);
  out += ",\"runs\":";
  i64(s.runs, out);
  out += ",\"passed\":";
  i64(s.passed, out);
  out += ",\"success_rate\":";
  num(s.success_rate, out);
  out += ",\"interval\":{\"low\":";
  num(s.interval.low, out);
  out += ",\"high\":";
  num(s.interval.high, out);
  out += "},\"interval_method\":";
  str(s.interval_method, out);
  out.push_back('}');
}

void rate_map(const std::map<std::string, metrics::RateSummary>& m, std::string& out) {
  out.push_back('{');
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) out.push_back(',');
    first = false;
    str(k, out);
    out.push_back(':');
    rate_summary(v, out);
  }
  out.push_back('}');
}

void latency(const metrics::Latency& l, std::string& out) {
  out += "{\"count\":";
  i64(l.count, out);
  out += ",\"p50\":";
  num(l.p50, out);
  out += ",\"p95\":";
  num(l.p95, out);
  out += ",\"max\":";
  num(l.max, out);
  out.push_back('}');
}

template <typename T> void optional_num(const std::optional<T>& v, std::string& out) {
  if (!v) {
    out += "null";
  } else if constexpr (std::is_integral_v<T>) {
    i64(*v, out);
  } else {
    num(*v, out);
  }
}

void suite_stats(const metrics::SuiteStats& s, std::string& out) {
  out += "{\"overall\":";
  rate_summary(s.overall, out);
  out += ",\"by_scenario\":";
  rate_map(s.by_scenario, out);
  out += ",\"by_difficulty\":";
  rate_map(s.by_difficulty, out);
  out += ",\"pass_at_k\":";
  doubles(s.pass_at_k, out);
  out += ",\"pass_hat_k\":";
  doubles(s.pass_hat_k, out);
  out += ",\"pass_k_tasks\":";
  i64(s.pass_k_tasks, out);
  out += ",\"pass_k_left_out\":";
  i64(s.pass_k_left_out, out);
  out += ",\"consistency_gap_pp\":";
  num(s.consistency_gap_pp, out);
  out += ",\"mixed_share_pp\":";
  num(s.mixed_share_pp, out);
  out += ",\"answer_inconsistency_pp\":";
  optional_num(s.answer_inconsistency_pp, out);
  out += ",\"trajectory_inconsistency_pp\":";
  optional_num(s.trajectory_inconsistency_pp, out);
  out += ",\"trajectory_similarity\":";
  optional_num(s.trajectory_similarity, out);
  out += ",\"group_completion\":";
  optional_num(s.group_completion, out);
  out += ",\"first_divergence_histogram\":{";
  bool first = true;
  for (const auto& [step, count] : s.first_divergence_histogram) {
    if (!first) out.push_back(',');
    first = false;
    out.push_back('"');
    i64(step, out);
    out += "\":";
    i64(count, out);
  }
  out += "},\"token_band_outliers\":";
  optional_num(s.token_band_outliers, out);
  out += ",\"polluted_tasks\":";
  optional_num(s.polluted_tasks, out);
  out += ",\"route_by_run\":{";
  first = true;
  for (const auto& [key, values] : s.route_by_run) {
    if (!first) out.push_back(',');
    first = false;
    str(key, out);
    out.push_back(':');
    strings(values, out);
  }
  out.push_back('}');
  out += ",\"total_runs\":";
  i64(s.total_runs, out);
  out += ",\"errored_runs\":";
  i64(s.errored_runs, out);
  out += ",\"error_rate\":";
  num(s.error_rate, out);
  out += ",\"errors_by_bucket\":{";
  first = true;
  for (const auto& [bucket, count] : s.errors_by_bucket) {
    if (!first) out.push_back(',');
    first = false;
    str(bucket, out);
    out.push_back(':');
    i64(count, out);
  }
  out += "},\"prompt_tokens\":";
  i64(s.prompt_tokens, out);
  out += ",\"completion_tokens\":";
  i64(s.completion_tokens, out);
  out += ",\"cached_tokens\":";
  i64(s.cached_tokens, out);
  out += ",\"paid_tokens\":";
  i64(s.paid_tokens, out);
  out += ",\"tokens_per_task\":";
  num(s.tokens_per_task, out);
  out += ",\"runs_without_usage\":";
  i64(s.runs_without_usage, out);
  out += ",\"cache_hits\":";
  i64(s.cache_hits, out);
  out += ",\"call_latency\":";
  latency(s.call_latency, out);
  out += ",\"run_latency\":";
  latency(s.run_latency, out);
  out.push_back('}');
}

void task_stats(const metrics::TaskStats& s, std::string& out) {
  out += "{\"n\":";
  i64(s.n, out);
  out += ",\"c\":";
  i64(s.c, out);
  out += ",\"errored\":";
  i64(s.errored, out);
  out += ",\"rate\":";
  num(s.rate, out);
  out += ",\"pass_at_k\":";
  doubles(s.pass_at_k, out);
  out += ",\"pass_hat_k\":";
  doubles(s.pass_hat_k, out);
  out += ",\"mixed\":";
  boolean(s.mixed, out);
  out += ",\"outcome_consistent\":";
  boolean(s.outcome_consistent, out);
  out += ",\"answer_consistent\":";
  boolean(s.answer_consistent, out);
  out += ",\"trajectory_consistent\":";
  boolean(s.trajectory_consistent, out);
  out += ",\"trajectory_similarity\":";
  num(s.trajectory_similarity, out);
  out += ",\"first_divergence\":";
  if (s.first_divergence)
    i64(*s.first_divergence, out);
  else
    out += "null";
  out += ",\"route_polluted\":";
  boolean(s.route_polluted, out);
  out += ",\"route_diff\":";
  strings(s.route_diff, out);
  out += ",\"token_band_outliers\":[";
  for (std::size_t i = 0; i < s.token_band_outliers.size(); ++i) {
    if (i != 0) out.push_back(',');
    i64(s.token_band_outliers[i], out);
  }
  out += "],\"prompt_tokens\":";
  i64(s.prompt_tokens, out);
  out += ",\"completion_tokens\":";
  i64(s.completion_tokens, out);
  out += ",\"cached_tokens\":";
  i64(s.cached_tokens, out);
  out += ",\"paid_tokens\":";
  i64(s.paid_tokens, out);
  out += ",\"usage_missing\":";
  boolean(s.usage_missing, out);
  out.push_back('}');
}

// `shared` is the route most runs used ("runs_route", else "route"): a run
// that used it does not repeat it, which keeps a third of every run line
// out of the file. An empty route (read from a report) is the shared one.
void run(const results::Run& r, const results::Route& shared, std::string& out) {
  out += "{\"index\":";
  i64(r.index, out);
  out += ",\"passed\":";
  boolean(r.passed, out);
  out += ",\"error\":";
  str(r.error, out);
  out += ",\"error_message\":";
  str(r.error_message, out);
  out += ",\"checks\":[";
  for (std::size_t i = 0; i < r.checks.size(); ++i) {
    const auto& c = r.checks[i];
    if (i != 0) out.push_back(',');
    out += "{\"label\":";
    str(c.label, out);
    out += ",\"passed\":";
    boolean(c.passed, out);
    out += ",\"detail\":";
    str(c.detail, out);
    if (!c.reason.empty()) {
      out += ",\"reason\":";
      str(c.reason, out);
    }
    out.push_back('}');
  }
  out += "],\"answer\":";
  str(r.answer, out);
  out += ",\"answer_truncated\":";
  boolean(r.answer_truncated, out);
  out += ",\"answer_sha256\":";
  str(r.answer_sha256, out);
  out += ",\"prompt_tokens\":";
  i64(r.prompt_tokens, out);
  out += ",\"completion_tokens\":";
  i64(r.completion_tokens, out);
  out += ",\"usage_known\":";
  boolean(r.usage_known, out);
  out += ",\"latency_ms\":";
  num(r.latency_ms, out);
  out += ",\"cache_hit\":";
  boolean(r.cache_hit, out);
  out += ",\"attempts\":";
  i64(r.attempts, out);
  out += ",\"fingerprint\":";
  str(r.fingerprint, out);
  if (!r.route.empty() && r.route != shared) {
    out += ",\"route\":";
    route(r.route, out);
  }
  out += ",\"tool_calls\":[";
  for (std::size_t i = 0; i < r.tool_calls.size(); ++i) {
    if (i != 0) out.push_back(',');
    out += "{\"name\":";
    str(r.tool_calls[i].name, out);
    out += ",\"arguments_sha256\":";
    str(r.tool_calls[i].arguments_sha256, out);
    out.push_back('}');
  }
  out.push_back(']');
  // What only fresh, streamed or judged runs have; absent otherwise, so a
  // replayed run's line stays short and older files read the same.
  if (r.ttft_ms > 0) {
    out += ",\"ttft_ms\":";
    num(r.ttft_ms, out);
  }
  if (!r.attempt_log.empty()) {
    out += ",\"attempt_log\":[";
    for (std::size_t i = 0; i < r.attempt_log.size(); ++i) {
      const results::Attempt& a = r.attempt_log[i];
      if (i != 0) out.push_back(',');
      out += "{\"status\":";
      i64(a.status, out);
      out += ",\"bucket\":";
      str(a.bucket, out);
      out += ",\"wait_ms\":";
      num(a.wait_ms, out);
      out += ",\"latency_ms\":";
      num(a.latency_ms, out);
      out += ",\"prompt_tokens\":";
      i64(a.prompt_tokens, out);
      out += ",\"completion_tokens\":";
      i64(a.completion_tokens, out);
      out += ",\"usage_known\":";
      boolean(a.usage_known, out);
      out.push_back('}');
    }
    out.push_back(']');
  }
  if (r.judge_calls > 0) {
    out += ",\"judge_calls\":";
    i64(r.judge_calls, out);
    out += ",\"judge_cache_hits\":";
    i64(r.judge_cache_hits, out);
    out += ",\"judge_prompt_tokens\":";
    i64(r.judge_prompt_tokens, out);
    out += ",\"judge_completion_tokens\":";
    i64(r.judge_completion_tokens, out);
  }
  if (r.agent) {
    out += ",\"agent_exit_code\":";
    i64(r.agent->exit_code, out);
    out += ",\"agent_timed_out\":";
    boolean(r.agent->timed_out, out);
    out += ",\"agent_stdout\":";
    str(r.agent->stdout_excerpt, out);
    out += ",\"agent_stderr\":";
    str(r.agent->stderr_excerpt, out);
    out += ",\"final_state_hash\":";
    str(r.agent->final_state_hash, out);
  }
  out.push_back('}');
}

// A generous guess of the output size so that the string grows once or
// twice rather than ~20 times for a large suite.
std::size_t estimate(const Report& r) {
  std::size_t n = 4096;
  for (const auto& t : r.tasks) {
    n += 512 + t.id.size() + t.scenario.size() + t.group.size() + t.input.size();
    for (const auto& run : t.runs) {
      // route.size(), not a walk of it: a 100,000-run report's routes are
      // a million scattered map nodes, and this is only a guess.
      n +=
          512 + run.answer.size() + run.error_message.size() + run.fingerprint.size() + 64 * run.route.size();
      for (const auto& c : run.checks)
        n += 48 + c.label.size() + c.detail.size();
      n += run.tool_calls.size() * 96;
    }
  }
  return n;
}

// How many runs of tasks [begin, end) used each route, in the order first
// seen. Runs use one or two routes, so a short list of the distinct ones is
// enough.
using RouteCounts = std::vector<std::pair<const results::Route*, std::size_t>>;

void count_routes(const Report& r, std::size_t begin, std::size_t end, RouteCounts& seen) {
  for (std::size_t i = begin; i < end; ++i)
    for (const auto& run : r.tasks[i].runs) {
      const results::Route& route = route_of(r, run);
      auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return *s.first == route; });
      if (it == seen.end())
        seen.emplace_back(&route, 1);
      else
        ++it->second;
    }
}

// The tasks split into parts of about equal runs, one per thread.
std::vector<std::size_t> task_bounds(const Report& r) {
  std::size_t runs = 0;
  for (const auto& t : r.tasks)
    runs += t.runs.size();
  const std::size_t parts = parts_for(runs, 20000);
  std::vector<std::size_t> bounds = {0};
  std::size_t seen = 0;
  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    seen += r.tasks[i].runs.size();
    if (bounds.size() < parts && seen * parts >= runs * bounds.size()) bounds.push_back(i + 1);
  }
  if (bounds.back() != r.tasks.size()) bounds.push_back(r.tasks.size());
  return bounds;
}

// The route most runs used. It is usually the configured one, but replayed
// runs carry the route they were recorded through (another concurrency, say),
// so it is found rather than assumed.
const results::Route& runs_route(const Report& r, const std::vector<std::size_t>& bounds) {
  std::vector<RouteCounts> parts(bounds.size() - 1);
  run_parallel(parts.size(), [&](std::size_t p) { count_routes(r, bounds[p], bounds[p + 1], parts[p]); });
  // Merged in task order, so "first seen" is what one pass would have seen.
  RouteCounts seen;
  for (const auto& part : parts)
    for (const auto& [route, count] : part) {
      // A named copy: clang 14 (the fuzz build) cannot capture a structured binding.
      const auto* const wanted = route;
      auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return *s.first == *wanted; });
      if (it == seen.end())
        seen.emplace_back(route, count);
      else
        it->second += count;
    }
  if (seen.empty()) return r.route;
  // Ties go to the configured route, then to the first seen: stable output.
  const auto* best = &seen.front();
  for (const auto& s : seen)
    if (s.second > best->second || (s.second == best->second && *s.first == r.route)) best = &s;
  return *best->first;
}

void tasks(const Report& r, std::size_t begin, std::size_t end, const results::Route& shared,
           std::string& out) {
  for (std::size_t i = begin; i < end; ++i) {
    const auto& t = r.tasks[i];
    out += i == 0 ? "\n" : ",\n";
    out += "{\"id\":";
    str(t.id, out);
    out += ",\"scenario\":";
    str(t.scenario, out);
    out += ",\"difficulty\":";
    str(t.difficulty, out);
    out += ",\"group\":";
    str(t.group, out);
    // Written only when known, so that reports without it (imported logs,
    // older files) read and write back the same bytes.
    if (!t.input_sha256.empty()) {
      out += ",\"input\":";
      str(t.input, out);
      out += ",\"input_truncated\":";
      boolean(t.input_truncated, out);
      out += ",\"input_sha256\":";
      str(t.input_sha256, out);
    }
    out += ",\"stats\":";
    task_stats(r.task_stats[i], out);
    out += ",\"runs\":[";
    for (std::size_t j = 0; j < t.runs.size(); ++j) {
      if (j != 0) out.push_back(',');
      run(t.runs[j], shared, out);
    }
    out += "]}";
  }
}

} // namespace

std::string to_json(const Report& r) {
  if (r.task_stats.size() != r.tasks.size())
    throw std::logic_error("report::to_json: task_stats is not parallel to tasks; call compute() first");
  // A 100,000-run report is mostly its runs, written in parts on every
  // core and joined: this was the longest serial stretch of a large replay.
  const std::vector<std::size_t> bounds = task_bounds(r);
  const results::Route& shared = runs_route(r, bounds);
  std::string out;
  out.reserve(estimate(r));
  out += "{\n\"schema\": ";
  str(r.schema, out);
  out += ",\n\"gate_version\": ";
  str(r.gate_version, out);
  out += ",\n\"suite\": {\"name\":";
  str(r.suite.name, out);
  out += ",\"version\":";
  str(r.suite.version, out);
  out += ",\"sha256\":";
  str(r.suite.sha256, out);
  out += "}";
  if (!r.prompts.empty()) {
    out += ",\n\"prompts\": [";
    for (std::size_t i = 0; i < r.prompts.size(); ++i) {
      out += i ? ",{\"role\":" : "{\"role\":";
      str(r.prompts[i].role, out);
      out += ",\"name\":";
      str(r.prompts[i].name, out);
      out += ",\"sha256\":";
      str(r.prompts[i].sha256, out);
      out += "}";
    }
    out += "]";
  }
  out += ",\n\"config\": ";
  value(r.config, out);
  out += ",\n\"route\": ";
  route(r.route, out);
  if (shared != r.route) {
    out += ",\n\"runs_route\": ";
    route(shared, out);
  }
  out += ",\n\"started_at\": ";
  str(r.started_at, out);
  out += ",\n\"finished_at\": ";
  str(r.finished_at, out);
  out += ",\n\"complete\": ";
  boolean(r.complete, out);
  out += ",\n\"incomplete_reason\": ";
  str(r.incomplete_reason, out);
  if (r.resumed) {
    out += ",\n\"resumed\": {\"from_started_at\":";
    str(r.resumed->from_started_at, out);
    out += ",\"runs\":";
    i64(r.resumed->runs, out);
    out += "}";
  }
  out += ",\n\"stats\": ";
  suite_stats(r.stats, out);
  out += ",\n\"tasks\": [";
  std::vector<std::string> parts(bounds.size() - 1);
  const std::size_t share = out.capacity() / std::max<std::size_t>(1, parts.size());
  run_parallel(parts.size(), [&](std::size_t p) {
    if (p != 0) parts[p].reserve(share);
    tasks(r, bounds[p], bounds[p + 1], shared, p == 0 ? out : parts[p]);
  });
  for (std::size_t p = 1; p < parts.size(); ++p)
    out += parts[p];
  out += "\n]\n}\n";
  return out;
}

} // namespace gate::report
