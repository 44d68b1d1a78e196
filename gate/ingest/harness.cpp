// The native result files of τ-bench and τ²-bench (sierra-research), read
// into records of the generic grammar (ingest.hpp) so that one reader,
// read_record, decides outcome, tokens, trajectory and route for every format.
//
// τ-bench (tau_bench/run.py) dumps a JSON list of trials
//   {task_id: int, trial: int, reward: float, info: {...}, traj: [messages]}
// with the agent's calls in the OpenAI form in traj's assistant messages.
// τ²-bench (tau2/data_model/simulation.py, Results) writes one object
//   {timestamp, info: {agent_info, user_info, num_trials, ...}, tasks, simulations: [...]}
// whose simulations carry task_id, trial, seed, duration, termination_reason,
// reward_info {reward, db_check, ...} and messages with per-message usage.
#include <gate/ingest/ingest.hpp>

#include <boost/json.hpp>
#include <cmath>

#include <gate/util/error.hpp>
#include <gate/util/json.hpp>

namespace gate::ingest {

namespace bj = boost::json;

namespace {

const char* const k_expected_any =
    "a τ²-bench results file (an object with \"info\" and \"simulations\"), a τ-bench results list "
    "(trials with \"task_id\", \"trial\", \"reward\", \"traj\"), a JSON array of records or JSONL";

const bj::value* member(const bj::value* v, std::initializer_list<const char*> path) {
  for (const char* key : path) {
    const bj::object* o = v ? v->if_object() : nullptr;
    if (!o) return nullptr;
    auto it = o->find(key);
    if (it == o->end() || it->value().is_null()) return nullptr;
    v = &it->value();
  }
  return v;
}

[[noreturn]] void bad(const std::string& where, const std::string& field, const std::string& expected,
                      const bj::value* got) {
  throw Error(Exit::bad_input, where + ": field \"" + field + "\": expected " + expected + ", " +
                                   (got ? std::string("got ") + json::kind_name(*got) : "none found"));
}

double required_number(const bj::value* v, const std::string& where, const std::string& field,
                       const std::string& expected) {
  if (!v || !v->is_number()) bad(where, field, expected, v);
  return v->to_number<double>();
}

void copy_if(bj::object& to, const char* key, const bj::value* v) {
  if (v) to[key] = *v;
}

std::string number_text(double d) {
  std::string s;
  json::append_number(d, s);
  return s;
}

void add(std::string& note, const std::string& part) { note += (note.empty() ? "" : "; ") + part; }

bool is_tau2(const bj::value& v) {
  const bj::value* sims = member(&v, {"simulations"});
  return v.is_object() && sims && sims->is_array() && member(&v, {"info"});
}

bool is_tau_bench(const bj::value& v) {
  const bj::array* a = v.if_array();
  if (!a || a->empty()) return false;
  const bj::value& first = a->front();
  return member(&first, {"traj"}) && member(&first, {"trial"}) && member(&first, {"task_id"});
}

// Reads every element of a harness's list, named "<prefix>i]" in errors;
// `read(element, where)` gives its record and the note for a failing run.
template <class Read>
std::vector<Located> each_object(const bj::array& items, const std::string& prefix, const char* what,
                                 Read read) {
  std::vector<Located> out;
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string where = prefix + std::to_string(i) + "]";
    if (!items[i].is_object())
      throw Error(Exit::bad_input,
                  where + ": expected " + what + " (a JSON object), got " + json::kind_name(items[i]));
    auto [rec, note] = read(items[i], where);
    out.push_back({std::move(rec), std::move(where), std::move(note)});
  }
  return out;
}

// ---- τ-bench ----

std::vector<Located> tau_bench_records(const bj::value& v, const std::string& file) {
  if (!v.is_array())
    throw Error(Exit::bad_input, file + ": expected a τ-bench results list (a JSON array of trials), got " +
                                     json::kind_name(v));
  return each_object(
      v.get_array(), file + ": trial [", "a τ-bench trial", [](const bj::value& t, const std::string& where) {
        bj::object rec;
        copy_if(rec, "task_id", member(&t, {"task_id"}));
        copy_if(rec, "run_id", member(&t, {"trial"}));
        rec["reward"] =
            required_number(member(&t, {"reward"}), where, "reward", "a number (the trial's reward)");
        copy_if(rec, "messages", member(&t, {"traj"}));
        // run.py turns an exception in the agent's run (often the provider's)
        // into reward 0 with info.error; gate counts it apart, as an errored run.
        if (member(&t, {"info", "error"})) rec["error_type"] = "exception";
        std::string note;
        if (const bj::value* parts = member(&t, {"info", "reward_info", "info"}); parts && parts->is_object())
          for (const char* key : {"r_actions", "r_outputs"})
            if (const bj::value* p = member(parts, {key}); p && p->is_number())
              add(note, std::string(key) + " " + number_text(p->to_number<double>()));
        return std::make_pair(std::move(rec), std::move(note));
      });
}

// ---- τ²-bench ----

// "2 of 3 met" for a list of checks that each carry a boolean `flag`.
void count_met(std::string& note, const bj::value* checks, const char* name, const char* flag) {
  if (!checks || !checks->is_array() || checks->get_array().empty()) return;
  std::size_t met = 0;
  for (const auto& c : checks->get_array())
    if (const bj::value* m = member(&c, {flag}); m && m->is_bool() && m->get_bool()) ++met;
  add(note, std::string(name) + " " + std::to_string(met) + " of " +
                std::to_string(checks->get_array().size()) + " met");
}

// The agent's tokens over the whole conversation; absent (usage unknown)
// when an agent message carries none. The user simulator's are not the
// agent's and are left out.
std::optional<bj::object> agent_usage(const bj::value* messages, const std::string& where) {
  if (!messages || !messages->is_array()) return std::nullopt;
  std::int64_t prompt = 0, completion = 0;
  bool any = false;
  const auto& list = messages->get_array();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const bj::value* role = member(&list[i], {"role"});
    if (!role || !role->is_string() || role->get_string() != "assistant") continue;
    const bj::value* p = member(&list[i], {"usage", "prompt_tokens"});
    const bj::value* c = member(&list[i], {"usage", "completion_tokens"});
    if (!p || !c) return std::nullopt;
    auto tokens = [&](const bj::value* v, const char* key) {
      double d = v->is_number() ? v->to_number<double>() : -1;
      if (!(d >= 0) || d != std::floor(d) || d > 9e15)
        bad(where, "messages[" + std::to_string(i) + "].usage." + key, "a whole number >= 0", v);
      return static_cast<std::int64_t>(d);
    };
    prompt += tokens(p, "prompt_tokens");
    completion += tokens(c, "completion_tokens");
    any = true;
  }
  if (!any) return std::nullopt;
  return bj::object{{"prompt_tokens", prompt}, {"completion_tokens", completion}};
}

std::vector<Located> tau2_records(const bj::value& v, const std::string& file) {
  if (!is_tau2(v))
    throw Error(Exit::bad_input,
                file +
                    ": expected a τ²-bench results file (an object with \"info\" and a "
                    "\"simulations\" list), got " +
                    (v.is_object() ? std::string("an object without them") : json::kind_name(v)));
  const bj::value* info = member(&v, {"info"});
  const auto& sims = v.at("simulations").get_array();
  return each_object(
      sims, file + ": simulations[", "a simulation", [info](const bj::value& s, const std::string& where) {
        bj::object rec;
        copy_if(rec, "task_id", member(&s, {"task_id"}));
        copy_if(rec, "run_id", member(&s, {"trial"}));
        copy_if(rec, "seed", member(&s, {"seed"}));
        copy_if(rec, "latency", member(&s, {"duration"}));
        copy_if(rec, "model", member(info, {"agent_info", "llm"}));
        copy_if(rec, "temperature", member(info, {"agent_info", "llm_args", "temperature"}));
        copy_if(rec, "user_model", member(info, {"user_info", "llm"}));
        copy_if(rec, "messages", member(&s, {"messages"}));
        if (auto usage = agent_usage(member(&s, {"messages"}), where)) rec["token_usage"] = std::move(*usage);
        const bj::value* ended = member(&s, {"termination_reason"});
        const std::string reason = ended && ended->is_string() ? std::string(ended->get_string()) : "";
        // τ²-bench leaves these out of its own metrics: the run never ran.
        const bool infrastructure = reason == "infrastructure_error";
        if (infrastructure) rec["error_type"] = reason;
        const bj::value* reward_info = member(&s, {"reward_info"});
        if (!infrastructure || reward_info)
          rec["reward"] = required_number(member(reward_info, {"reward"}), where, "reward_info.reward",
                                          "a number (the simulation's reward)");
        std::string note;
        if (!reason.empty()) add(note, "ended: " + reason);
        if (const bj::value* db = member(reward_info, {"db_check", "db_reward"}); db && db->is_number())
          add(note, "db_reward " + number_text(db->to_number<double>()));
        count_met(note, member(reward_info, {"env_assertions"}), "env_assertions", "met");
        count_met(note, member(reward_info, {"action_checks"}), "action_checks", "action_match");
        count_met(note, member(reward_info, {"nl_assertions"}), "nl_assertions", "met");
        count_met(note, member(reward_info, {"communicate_checks"}), "communicate_checks", "met");
        return std::make_pair(std::move(rec), std::move(note));
      });
}

std::string_view without_bom(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  return text;
}

// A file whose first character opens an object is one JSON text (τ²-bench's
// results, usually over many lines) or JSONL; its first line tells which.
FileRecords automatic(const Input& in) {
  std::string_view text = without_bom(in.text);
  auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || (text[first] != '{' && text[first] != '['))
    return {split_records(in.text, in.file), Format::jsonl};
  if (text[first] == '[') {
    bj::value v = json::parse_strict(text, in.file);
    if (is_tau_bench(v)) return {tau_bench_records(v, in.file), Format::tau_bench};
    return {split_records(in.text, in.file), Format::jsonl};
  }
  auto eol = text.find('\n', first);
  boost::system::error_code ec;
  bj::value line =
      bj::parse(text.substr(first, eol == std::string_view::npos ? std::string_view::npos : eol - first), ec);
  // A results file written without indentation is one line: still τ²-bench's.
  if (!ec && !is_tau2(line)) return {split_records(in.text, in.file), Format::jsonl};
  bj::value v = json::parse_strict(text, in.file); // one text: a malformed one names its line:col
  if (is_tau2(v)) return {tau2_records(v, in.file), Format::tau2};
  throw Error(Exit::bad_input, in.file +
                                   ": one JSON object over several lines without \"info\" and "
                                   "\"simulations\"; expected " +
                                   k_expected_any);
}

} // namespace

Format parse_format(std::string_view name) {
  for (Format f : {Format::automatic, Format::jsonl, Format::tau_bench, Format::tau2})
    if (name == format_name(f)) return f;
  throw Error(Exit::bad_input,
              "--format \"" + std::string(name) + "\": expected auto, jsonl, tau-bench or tau2");
}

const char* format_name(Format f) {
  switch (f) {
  case Format::automatic: return "auto";
  case Format::jsonl: return "jsonl";
  case Format::tau_bench: return "tau-bench";
  case Format::tau2: return "tau2";
  }
  return "auto";
}

FileRecords records_of(const Input& in, const Options& o) {
  // --map names fields of the generic records: with it, a file is read so.
  if (o.format == Format::jsonl || (o.format == Format::automatic && !o.map.empty()))
    return {split_records(in.text, in.file), Format::jsonl};
  if (!o.map.empty())
    throw Error(Exit::bad_input, std::string("--map: names fields of --format jsonl records; --format ") +
                                     format_name(o.format) + " reads its own fields");
  if (o.format == Format::automatic) return automatic(in);
  bj::value v = json::parse_strict(without_bom(in.text), in.file);
  if (o.format == Format::tau_bench) return {tau_bench_records(v, in.file), Format::tau_bench};
  return {tau2_records(v, in.file), Format::tau2};
}

} // namespace gate::ingest
