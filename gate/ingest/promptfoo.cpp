// promptfoo's results file (`promptfoo eval -o results.json`; writeOutput
// in src/util/output.ts, EvaluateSummaryV3 and EvaluateResult in
// src/types), read into records of the generic grammar:
//   {evalId, results: {version, timestamp, prompts, stats: {successes,
//    failures, errors, tokenUsage}, results: [{testIdx, promptIdx, testCase,
//    provider: {id, label}, prompt: {raw, label}, vars, response: {output,
//    tokenUsage}, success, failureReason, error, score, latencyMs, cost,
//    gradingResult: {pass, score, reason, componentResults}, tokenUsage}]},
//   config, shareableUrl}
// A result row carries no repeat index: --repeat N gives each repeat of a
// test its own testIdx. So a task is what repeats share, the test (its
// description, else its vars) under one provider and prompt column
// (promptIdx), and its runs are ordered by testIdx.
#include <gate/ingest/harness.hpp>

#include <gate/util/sha256.hpp>
#include <gate/util/text.hpp>

namespace gate::ingest::detail {

namespace {

// promptfoo's ResultFailureReason (src/types): NONE 0, ASSERT 1, ERROR 2.
constexpr int k_failure_error = 2;

// A test's name: its description, else its vars as canonical JSON; a long
// one is cut and keeps a hash of the whole, so that two tests stay two.
std::string test_name(const bj::value& r) {
  const bj::value* d = member(&r, {"testCase", "description"});
  if (!d) d = member(&r, {"description"});
  std::string name;
  if (d && d->is_string() && !d->get_string().empty()) {
    name = std::string(d->get_string());
  } else {
    const bj::value* vars = member(&r, {"vars"});
    if (!vars) vars = member(&r, {"testCase", "vars"});
    name = vars ? json::canonical(*vars) : "{}";
  }
  constexpr std::size_t k_limit = 80;
  if (name.size() <= k_limit) return name;
  return std::string(utf8_prefix(name, k_limit)) + "…#" + sha256_hex(name).substr(0, 8);
}

std::string provider_name(const bj::value& r) {
  const bj::value* p = member(&r, {"provider"});
  if (p && p->is_string()) return std::string(p->get_string());
  for (const char* key : {"label", "id"})
    if (const bj::value* v = member(p, {key}); v && v->is_string() && !v->get_string().empty())
      return std::string(v->get_string());
  return "";
}

// The run's tokens: the row's own count (what promptfoo's stats sum), else
// its provider response's.
void usage(const bj::value& r, bj::object& rec) {
  const bj::value* u = member(&r, {"tokenUsage"});
  if (!u) u = member(&r, {"response", "tokenUsage"});
  if (!u || !u->is_object()) return;
  bj::object t;
  copy_if(t, "prompt_tokens", member(u, {"prompt"}));
  copy_if(t, "completion_tokens", member(u, {"completion"}));
  copy_if(t, "total_tokens", member(u, {"total"}));
  if (!t.empty()) rec["token_usage"] = std::move(t);
}

} // namespace

bool is_promptfoo(const bj::value& v) {
  const bj::value* rows = member(&v, {"results", "results"});
  return v.is_object() && rows && rows->is_array() && member(&v, {"results", "stats"});
}

std::vector<Located> promptfoo_records(const bj::value& v, const std::string& file) {
  if (!is_promptfoo(v))
    not_the_format(file,
                   "a promptfoo results file (an object whose \"results\" holds a \"results\" list and "
                   "\"stats\", as promptfoo eval -o results.json writes it)",
                   v);
  return each_object(
      v.at("results").at("results").get_array(), file + ": results.results[", "a promptfoo result",
      [](const bj::value& r, const std::string& where) {
        bj::object rec;
        const std::string provider = provider_name(r);
        const double column = required_number(member(&r, {"promptIdx"}), where, "promptIdx",
                                              "a number (the result's prompt column)");
        rec["task_id"] = test_name(r) + " [" + (provider.empty() ? "" : provider + ", ") + "prompt " +
                         number_text(column) + "]";
        rec["run_id"] = required_number(member(&r, {"testIdx"}), where, "testIdx", "a number (the test row)");
        if (const bj::value* id = member(&r, {"provider", "id"}); id && id->is_string())
          rec["model"] = *id;
        else if (!provider.empty())
          rec["model"] = provider;
        copy_if(rec, "latency_ms", member(&r, {"latencyMs"}));
        copy_if(rec, "cost", member(&r, {"cost"}));
        usage(r, rec);
        if (const bj::value* out = member(&r, {"response", "output"})) {
          if (out->is_string())
            rec["answer"] = *out;
          else
            rec["final_state"] = *out;
        }
        const bj::value* success = member(&r, {"success"});
        if (!success || !success->is_bool()) bad(where, "success", "true or false", success);
        const bj::value* reason = member(&r, {"failureReason"});
        // promptfoo's stats count a row that did not succeed with
        // failureReason ERROR as an error, apart from the failures.
        if (!success->get_bool() && reason && reason->is_number() &&
            reason->to_number<double>() == k_failure_error)
          rec["error_type"] = "error";
        else
          rec["passed"] = success->get_bool();
        std::string note;
        if (const bj::value* parts = member(&r, {"gradingResult", "componentResults"});
            parts && parts->is_array() && !parts->get_array().empty()) {
          std::size_t passed = 0;
          for (const auto& c : parts->get_array())
            if (const bj::value* p = member(&c, {"pass"}); p && p->is_bool() && p->get_bool()) ++passed;
          add(note, "assertions " + std::to_string(passed) + " of " +
                        std::to_string(parts->get_array().size()) + " passed");
        }
        if (const bj::value* why = member(&r, {"gradingResult", "reason"}); why && why->is_string())
          add(note, std::string(utf8_prefix(why->get_string(), 200)));
        return std::make_pair(std::move(rec), std::move(note));
      });
}

} // namespace gate::ingest::detail
