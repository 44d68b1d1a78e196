#include <tests/support/fake_upstream.hpp>

#include <tests/support/fake_answers.hpp>

#include <boost/json.hpp>
#include <cstdlib>

#include <gate/util/error.hpp>
#include <gate/util/json.hpp>

// The fake upstream's script, read strictly: a typo in a test's script is
// an error, not a fault silently never drawn.
namespace gate::testing {

namespace {

void check_keys(const boost::json::object& o, std::initializer_list<std::string_view> allowed,
                const std::string& where) {
  for (const auto& kv : o) {
    bool known = false;
    for (auto a : allowed)
      known = known || kv.key() == a;
    if (!known) throw_bad_input(where + ": unknown key \"" + std::string(kv.key()) + "\"");
  }
}

std::string optional_string(const boost::json::object& o, std::string_view key, const std::string& where) {
  return o.contains(key) ? json::get_string(o, key, where) : "";
}

const boost::json::array& array_field(const boost::json::object& o, std::string_view key,
                                      const std::string& where) {
  const auto& v = o.at(key);
  if (!v.is_array()) throw_bad_input(where + ": field \"" + std::string(key) + "\" must be an array");
  return v.get_array();
}

Rule parse_rule(const boost::json::value& v, const std::string& where) {
  const auto& o = json::as_object(v, where);
  check_keys(o, {"match", "answers", "tool_calls", "finish_reason", "shape", "body"}, where);
  Rule r;
  r.match = optional_string(o, "match", where);
  if (!o.contains("answers")) throw_bad_input(where + ": missing field \"answers\"");
  for (const auto& a : array_field(o, "answers", where)) {
    if (!a.is_string()) throw_bad_input(where + ": \"answers\" must hold strings");
    r.answers.emplace_back(a.get_string());
  }
  if (r.answers.empty()) throw_bad_input(where + ": \"answers\" must not be empty");
  r.finish_reason = optional_string(o, "finish_reason", where);
  r.shape = optional_string(o, "shape", where);
  r.body = optional_string(o, "body", where);
  if (!r.shape.empty() && !known_shape(r.shape))
    throw_bad_input(where + ": \"shape\" must be \"refusal\", \"length\", \"content_filter\" or "
                            "\"bad_arguments\"");
  if (o.contains("tool_calls")) {
    for (const auto& t : array_field(o, "tool_calls", where)) {
      const auto& call = json::as_object(t, where + ".tool_calls");
      check_keys(call, {"name", "arguments"}, where + ".tool_calls");
      if (!call.contains("arguments")) throw_bad_input(where + ".tool_calls: missing \"arguments\"");
      r.tool_calls.emplace_back(json::get_string(call, "name", where + ".tool_calls"),
                                boost::json::serialize(call.at("arguments")));
    }
  }
  return r;
}

Fault parse_fault(const boost::json::value& v, const std::string& where) {
  const auto& o = json::as_object(v, where);
  check_keys(o,
             {"match", "status", "times", "body", "headers", "close", "stream", "during_ms", "probability"},
             where);
  Fault f;
  f.match = optional_string(o, "match", where);
  if (o.contains("status")) f.status = static_cast<int>(json::get_int(o, "status", where));
  if (f.status < 100 || f.status > 599) throw_bad_input(where + ": \"status\" must be from 100 to 599");
  if (o.contains("times")) f.times = static_cast<int>(json::get_int(o, "times", where));
  if (f.times < 0) throw_bad_input(where + ": \"times\" must not be negative");
  f.body = optional_string(o, "body", where);
  if (o.contains("close")) f.close_without_response = json::get_bool(o, "close", where);
  f.stream = optional_string(o, "stream", where);
  if (o.contains("during_ms")) f.during_ms = json::get_number(o, "during_ms", where);
  if (o.contains("probability")) f.probability = json::get_number(o, "probability", where);
  if (!(f.probability >= 0 && f.probability <= 1))
    throw_bad_input(where + ": \"probability\" must be from 0 to 1");
  if (!f.stream.empty() && f.stream != "error" && f.stream != "cut")
    throw_bad_input(where + ": \"stream\" must be \"error\" or \"cut\"");
  if (o.contains("headers")) {
    const auto& h = json::as_object(o.at("headers"), where + ".headers");
    for (const auto& kv : h) {
      if (!kv.value().is_string()) throw_bad_input(where + ".headers: values must be strings");
      f.headers.emplace_back(std::string(kv.key()), std::string(kv.value().get_string()));
    }
  }
  return f;
}

} // namespace

void clear_network_env() {
  for (const char* v : {"SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY",
                        "http_proxy", "NO_PROXY", "no_proxy", "GATE_ALLOW_HTTP"})
    unsetenv(v);
}

Script parse_script(const std::string& json_text, const std::string& where) {
  boost::json::value v = json::parse_strict(json_text, where);
  const auto& o = json::as_object(v, where);
  check_keys(o,
             {"latency_ms", "event_gap_ms", "rules", "faults", "prefix", "models", "seed",
              "azure_api_version", "no_usage", "reject_seed", "error_style", "enforce",
              "cached_prompt_tokens"},
             where);
  Script s;
  if (o.contains("latency_ms")) s.latency_ms = json::get_number(o, "latency_ms", where);
  if (s.latency_ms < 0) throw_bad_input(where + ": \"latency_ms\" must not be negative");
  if (o.contains("event_gap_ms")) s.event_gap_ms = json::get_number(o, "event_gap_ms", where);
  if (s.event_gap_ms < 0) throw_bad_input(where + ": \"event_gap_ms\" must not be negative");
  s.prefix = optional_string(o, "prefix", where);
  s.azure_api_version = optional_string(o, "azure_api_version", where);
  if (o.contains("no_usage")) s.no_usage = json::get_bool(o, "no_usage", where);
  if (o.contains("reject_seed")) s.reject_seed = json::get_bool(o, "reject_seed", where);
  s.error_style = optional_string(o, "error_style", where);
  s.enforce = optional_string(o, "enforce", where);
  if (!s.enforce.empty() && s.enforce != "openai-reasoning" && s.enforce != "claude-4.5")
    throw_bad_input(where + ": \"enforce\" must be \"openai-reasoning\" or \"claude-4.5\"");
  if (o.contains("cached_prompt_tokens"))
    s.cached_prompt_tokens = json::get_int(o, "cached_prompt_tokens", where);
  if (!s.error_style.empty() && s.error_style != "azure" && s.error_style != "gemini" &&
      s.error_style != "ollama")
    throw_bad_input(where + ": \"error_style\" must be \"azure\", \"gemini\" or \"ollama\"");
  if (o.contains("seed")) s.seed = static_cast<std::uint64_t>(json::get_int(o, "seed", where));
  if (o.contains("models"))
    for (const auto& m : array_field(o, "models", where)) {
      if (!m.is_string()) throw_bad_input(where + ": \"models\" must hold strings");
      s.models.emplace_back(m.get_string());
    }
  if (o.contains("rules")) {
    const auto& rules = array_field(o, "rules", where);
    for (std::size_t i = 0; i < rules.size(); ++i)
      s.rules.push_back(parse_rule(rules[i], where + ": rules[" + std::to_string(i) + "]"));
  }
  if (o.contains("faults")) {
    const auto& faults = array_field(o, "faults", where);
    for (std::size_t i = 0; i < faults.size(); ++i)
      s.faults.push_back(parse_fault(faults[i], where + ": faults[" + std::to_string(i) + "]"));
  }
  return s;
}

} // namespace gate::testing
