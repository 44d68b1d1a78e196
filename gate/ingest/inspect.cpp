// Inspect AI's JSON eval log (`inspect eval --log-format json`; EvalLog in
// inspect_ai/log/_log.py), read into records of the generic grammar:
//   {version, status, eval: {task, model, model_base_url, model_generate_config,
//    config: {epochs, ...}, ...}, plan, results, stats,
//    samples: [{id, epoch, messages, output, scores: {scorer: {value, answer,
//      explanation}}, model_usage: {model: ModelUsage}, total_time, error,
//      error_retries, limit: {type, limit}}]}
// A sample id is a task and each epoch of it a run.
#include <gate/ingest/harness.hpp>

#include <cmath>
#include <optional>

#include <gate/util/text.hpp>

namespace gate::ingest::detail {

namespace {

// Inspect's value_to_float (scorer/_metric.py) with its default CORRECT,
// INCORRECT, PARTIAL and NOANSWER letters: numbers and booleans as they
// are, "C" 1, "P" 0.5, "I" and "N" 0, yes/true 1, no/false 0 (any case), a
// numeric string its number; anything else 0, as Inspect counts it.
double value_to_float(const bj::value& v) {
  if (v.is_bool()) return v.get_bool() ? 1.0 : 0.0;
  if (v.is_number()) return v.to_number<double>();
  if (!v.is_string()) return 0.0;
  const std::string s(v.get_string());
  if (s == "C") return 1.0;
  if (s == "P") return 0.5;
  if (s == "I" || s == "N") return 0.0;
  std::string lower;
  for (char ch : s)
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  if (lower == "yes" || lower == "true") return 1.0;
  if (lower == "no" || lower == "false") return 0.0;
  boost::system::error_code ec;
  bj::value n = bj::parse(s, ec);
  if (!ec && n.is_number() && std::isfinite(n.to_number<double>())) return n.to_number<double>();
  return 0.0;
}

bool passes(double x, const Options& o) {
  return std::fabs(x - 1.0) <= 1e-6 || (o.pass_threshold && x >= *o.pass_threshold);
}

// How a score reads in a failing run's note: the value as the log has it.
std::string value_text(const bj::value& v) {
  if (v.is_string()) return std::string(utf8_prefix(v.get_string(), 40));
  if (v.is_number()) return number_text(v.to_number<double>());
  if (v.is_bool()) return v.get_bool() ? "true" : "false";
  return json::kind_name(v);
}

// The sample's outcome from its scores: the --scorer one, or every one.
// One scorer gives a reward (so --pass-threshold and the reward check
// apply as to any harness's); several give passed = all pass.
void outcome(const bj::value& sample, const std::string& where, const Options& o, bj::object& rec,
             std::string& note) {
  const bj::value* scores = member(&sample, {"scores"});
  if (!scores || !scores->is_object() || scores->get_object().empty())
    bad(where, "scores", "the sample's scores (an object of scorer name to score)", scores);
  std::vector<std::pair<std::string, const bj::value*>> used;
  if (!o.scorer.empty()) {
    auto it = scores->get_object().find(o.scorer);
    if (it == scores->get_object().end()) {
      std::string known;
      for (const auto& [name, s] : scores->get_object())
        known += (known.empty() ? "" : ", ") + std::string(name);
      throw Error(Exit::bad_input,
                  where + ": no score of scorer \"" + o.scorer + "\" (--scorer); the sample has " + known);
    }
    used.emplace_back(o.scorer, &it->value());
  } else {
    for (const auto& [name, s] : scores->get_object())
      used.emplace_back(std::string(name), &s);
  }
  bool all = true, unscored = false;
  std::optional<double> single;
  for (const auto& [name, score] : used) {
    // A NaN value (null here, harness.cpp) is Inspect's "unscored": no
    // outcome, so the run is not measured rather than failed.
    const bj::object* fields = score->if_object();
    if (fields && fields->contains("value") && fields->at("value").is_null()) {
      unscored = true;
      add(note, std::string(utf8_prefix(name, 60)) + " unscored");
      continue;
    }
    const bj::value* value = member(score, {"value"});
    if (!value) bad(where, "scores." + name + ".value", "the score's value", value);
    const double x = value_to_float(*value);
    all = all && passes(x, o);
    if (used.size() == 1) single = x;
    add(note, std::string(utf8_prefix(name, 60)) + " " + value_text(*value));
  }
  if (unscored) {
    rec["error_type"] = "unscored";
  } else if (single) {
    rec["reward"] = *single;
  } else {
    rec["passed"] = all;
  }
}

// Every model the sample called (graders included, as gate counts its own
// judge's tokens in a run): input_tokens excludes cache reads and writes,
// so the prompt is their sum. Absent when the log has no usage.
void usage_and_cost(const bj::value& sample, const std::string& where, bj::object& rec) {
  const bj::value* usage = member(&sample, {"model_usage"});
  if (!usage || !usage->is_object() || usage->get_object().empty()) return;
  std::int64_t prompt = 0, completion = 0;
  double cost = 0;
  bool priced = true;
  for (const auto& [model, u] : usage->get_object()) {
    const std::string at = "model_usage." + std::string(model) + ".";
    prompt += whole(member(&u, {"input_tokens"}), where, at + "input_tokens");
    for (const char* cache : {"input_tokens_cache_read", "input_tokens_cache_write"})
      if (const bj::value* c = member(&u, {cache})) prompt += whole(c, where, at + cache);
    completion += whole(member(&u, {"output_tokens"}), where, at + "output_tokens");
    const bj::value* c = member(&u, {"total_cost"});
    if (c && c->is_number())
      cost += c->to_number<double>();
    else
      priced = false;
  }
  rec["token_usage"] = bj::object{{"prompt_tokens", prompt}, {"completion_tokens", completion}};
  if (priced) rec["cost"] = cost;
}

// Inspect's ToolCall names its function in `function` (a string).
bj::array tool_calls(const bj::value* messages) {
  bj::array out;
  if (!messages || !messages->is_array()) return out;
  for (const auto& m : messages->get_array()) {
    const bj::value* role = member(&m, {"role"});
    if (!role || !role->is_string() || role->get_string() != "assistant") continue;
    const bj::value* calls = member(&m, {"tool_calls"});
    if (!calls || !calls->is_array()) continue;
    for (const auto& c : calls->get_array()) {
      const bj::value* fn = member(&c, {"function"});
      if (!fn || !fn->is_string()) continue;
      bj::object call{{"name", fn->get_string()}};
      copy_if(call, "arguments", member(&c, {"arguments"}));
      out.emplace_back(std::move(call));
    }
  }
  return out;
}

} // namespace

bool is_inspect(const bj::value& v) {
  return v.is_object() && member(&v, {"version"}) && member(&v, {"eval", "task"}) &&
         member(&v, {"eval", "model"});
}

std::vector<Located> inspect_records(const bj::value& v, const std::string& file, const Options& o) {
  if (!is_inspect(v))
    not_the_format(file,
                   "an Inspect AI JSON eval log (an object with \"version\" and \"eval\" naming its task "
                   "and model)",
                   v);
  const bj::value* samples = member(&v, {"samples"});
  if (!samples || !samples->is_array()) {
    const bj::value* status = member(&v, {"status"});
    throw Error(Exit::bad_input,
                file + ": the Inspect log (status \"" +
                    (status && status->is_string() ? std::string(status->get_string()) : "unknown") +
                    "\") has no \"samples\" list; expected the samples (inspect eval writes them unless "
                    "--no-log-samples)");
  }
  const bj::value* spec = member(&v, {"eval"});
  return each_object(
      samples->get_array(), file + ": samples[", "an Inspect sample",
      [&](const bj::value& s, const std::string& where) {
        bj::object rec;
        copy_if(rec, "task_id", member(&s, {"id"}));
        copy_if(rec, "run_id", member(&s, {"epoch"}));
        copy_if(rec, "model", member(spec, {"model"}));
        copy_if(rec, "base_url", member(spec, {"model_base_url"}));
        copy_if(rec, "temperature", member(spec, {"model_generate_config", "temperature"}));
        copy_if(rec, "top_p", member(spec, {"model_generate_config", "top_p"}));
        copy_if(rec, "seed", member(spec, {"model_generate_config", "seed"}));
        copy_if(rec, "latency", member(&s, {"total_time"}));
        rec["tool_calls"] = tool_calls(member(&s, {"messages"}));
        if (const bj::value* a = member(&s, {"output", "completion"});
            a && a->is_string() && !a->get_string().empty())
          rec["answer"] = *a;
        usage_and_cost(s, where, rec);
        // Errors Inspect retried (--retry-on-error) before the sample ran through.
        if (const bj::value* r = member(&s, {"error_retries"}); r && r->is_array())
          rec["retries"] = r->get_array().size();
        std::string note;
        if (member(&s, {"error"})) {
          rec["error_type"] = "exception";
        } else {
          outcome(s, where, o, rec, note);
        }
        if (const bj::value* limit = member(&s, {"limit", "type"}); limit && limit->is_string()) {
          std::string ended = "ended: " + std::string(utf8_prefix(limit->get_string(), 20)) + " limit";
          if (const bj::value* at = member(&s, {"limit", "limit"}); at && at->is_number())
            ended += " " + number_text(at->to_number<double>());
          add(note, ended);
        }
        return std::make_pair(std::move(rec), std::move(note));
      });
}

} // namespace gate::ingest::detail
