// The native result files of τ-bench and τ²-bench (sierra-research), read
// into records of the generic grammar (ingest.hpp).
//
// τ-bench (tau_bench/run.py) dumps a JSON list of trials
//   {task_id: int, trial: int, reward: float, info: {...}, traj: [messages]}
// with the agent's calls in the OpenAI form in traj's assistant messages.
// τ²-bench (tau2/data_model/simulation.py, Results) writes one object
//   {timestamp, info: {agent_info, user_info, num_trials, ...}, tasks, simulations: [...]}
// whose simulations carry task_id, trial, seed, duration, termination_reason,
// agent_cost, user_cost, reward_info {reward, db_check, ...} and messages
// with per-message usage and cost.
#include <gate/ingest/harness.hpp>

#include <algorithm>
#include <cmath>
#include <optional>

namespace gate::ingest::detail {

bool is_tau2(const bj::value& v) {
  const bj::value* sims = member(&v, {"simulations"});
  if (!sims) sims = member(&v, {"simulation_index"});
  return v.is_object() && sims && sims->is_array() && member(&v, {"info"});
}

bool is_tau_bench(const bj::value& v) {
  const bj::array* a = v.if_array();
  if (!a || a->empty()) return false;
  const bj::value& first = a->front();
  return member(&first, {"traj"}) && member(&first, {"trial"}) && member(&first, {"task_id"});
}

// ---- τ-bench ----

namespace {

struct NameRoute {
  std::string model, temperature, user_model;
};

bool one_of(std::string_view s, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

// run.py names its file from the run's settings:
//   <agent_strategy>-<model without
//   provider/>-<temperature>_range_<start>-<end>_user-<user_model>-<user_strategy>_<MMDDhhmmss>.json
// (agent strategies and user strategies as its --choices list them). A
// file renamed since reads as no route, as before.
std::optional<NameRoute> route_from_name(const std::string& file) {
  std::string_view name = file;
  if (auto slash = name.find_last_of('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
  if (name.size() < 5 || name.substr(name.size() - 5) != ".json") return std::nullopt;
  name.remove_suffix(5);
  const auto range = name.find("_range_"), user = name.find("_user-");
  if (range == std::string_view::npos || user == std::string_view::npos || user < range) return std::nullopt;
  std::string_view agent = name.substr(0, range), users = name.substr(user + 6);
  std::string_view strategy;
  for (std::string_view s : {"tool-calling", "act", "react", "few-shot"})
    if (agent.substr(0, s.size() + 1) == std::string(s) + "-") strategy = s;
  if (strategy.empty()) return std::nullopt;
  agent.remove_prefix(strategy.size() + 1);
  const auto t = agent.rfind('-'), time = users.rfind('_');
  if (t == std::string_view::npos || t == 0 || time == std::string_view::npos) return std::nullopt;
  const std::string_view temperature = agent.substr(t + 1), stamp = users.substr(time + 1);
  users = users.substr(0, time);
  const auto u = users.rfind('-');
  if (u == std::string_view::npos || u == 0 ||
      !one_of(users.substr(u + 1), {"human", "llm", "react", "verify", "reflection"}))
    return std::nullopt;
  if (temperature.empty() || temperature.find_first_not_of("0123456789.") != std::string_view::npos ||
      stamp.size() != 10 || stamp.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  return NameRoute{std::string(agent.substr(0, t)), std::string(temperature),
                   std::string(users.substr(0, u))};
}

} // namespace

std::vector<Located> tau_bench_records(const bj::value& v, const std::string& file) {
  if (!v.is_array())
    throw Error(Exit::bad_input, file + ": expected a τ-bench results list (a JSON array of trials), got " +
                                     json::kind_name(v));
  const auto named = route_from_name(file);
  return each_object(
      v.get_array(), file + ": trial [", "a τ-bench trial",
      [&named](const bj::value& t, const std::string& where) {
        bj::object rec;
        if (named) {
          rec["model"] = named->model;
          // "0.0" as run.py wrote it: read as the number, as other routes' temperatures are.
          boost::system::error_code ec;
          bj::value temperature = bj::parse(named->temperature, ec);
          if (!ec) rec["temperature"] = temperature;
          rec["user_model"] = named->user_model;
        }
        copy_if(rec, "task_id", member(&t, {"task_id"}));
        copy_if(rec, "run_id", member(&t, {"trial"}));
        rec["reward"] =
            required_number(member(&t, {"reward"}), where, "reward", "a number (the trial's reward)");
        copy_if(rec, "messages", member(&t, {"traj"}));
        // The user simulator's spend (the env adds it to info); the agent's
        // own cost is not in the file.
        copy_if(rec, "user_cost", member(&t, {"info", "user_cost"}));
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

namespace {

// "2 of 3 met" for a list of checks that each carry a boolean `flag`.
void count_met(std::string& note, const bj::value* checks, const char* name, const char* flag) {
  if (!checks || !checks->is_array() || checks->get_array().empty()) return;
  std::size_t met = 0;
  for (const auto& c : checks->get_array())
    if (const bj::value* m = member(&c, {flag}); m && m->is_bool() && m->get_bool()) ++met;
  add(note, std::string(name) + " " + std::to_string(met) + " of " +
                std::to_string(checks->get_array().size()) + " met");
}

bool role_is(const bj::value& message, const char* role) {
  const bj::value* r = member(&message, {"role"});
  return r && r->is_string() && r->get_string() == role;
}

// The orchestrator's opening message: no usage object at all (null or
// absent) and no tool calls.
bool canned(const bj::value& message) {
  const bj::value* usage = member(&message, {"usage"});
  const bj::value* calls = member(&message, {"tool_calls"});
  const bool no_calls = !calls || calls->is_null() || (calls->is_array() && calls->get_array().empty());
  return (!usage || usage->is_null()) && no_calls;
}

// The agent's tokens over the whole conversation; absent (usage unknown)
// when a message the agent's model produced carries none. The user
// simulator's are not the agent's and are left out, and so is τ²-bench's
// canned greeting: when the agent speaks first, the orchestrator opens with
// a fixed assistant message that no model produced (usage null, no tool
// calls), which is no missing measurement.
std::optional<bj::object> agent_usage(const bj::value* messages, const std::string& where) {
  if (!messages || !messages->is_array()) return std::nullopt;
  std::int64_t prompt = 0, completion = 0;
  bool any = false;
  const auto& list = messages->get_array();
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!role_is(list[i], "assistant")) continue;
    const bj::value* p = member(&list[i], {"usage", "prompt_tokens"});
    const bj::value* c = member(&list[i], {"usage", "completion_tokens"});
    if (i == 0 && !p && !c && canned(list[i])) continue;
    if (!p || !c) return std::nullopt;
    const std::string at = "messages[" + std::to_string(i) + "].usage.";
    prompt += whole(p, where, at + "prompt_tokens");
    completion += whole(c, where, at + "completion_tokens");
    any = true;
  }
  if (!any) return std::nullopt;
  return bj::object{{"prompt_tokens", prompt}, {"completion_tokens", completion}};
}

// One side's cost: the simulation's own total (agent_cost, user_cost) when
// τ²-bench filled it in, else the sum of that side's per-message `cost`;
// absent when a message of that side has none.
std::optional<double> side_cost(const bj::value& sim, const char* total, const char* role) {
  if (const bj::value* t = member(&sim, {total}); t && t->is_number()) return t->to_number<double>();
  const bj::value* messages = member(&sim, {"messages"});
  if (!messages || !messages->is_array()) return std::nullopt;
  double sum = 0;
  bool any = false;
  for (const auto& m : messages->get_array()) {
    if (!role_is(m, role)) continue;
    const bj::value* c = member(&m, {"cost"});
    if (!c || !c->is_number()) return std::nullopt;
    sum += c->to_number<double>();
    any = true;
  }
  if (!any) return std::nullopt;
  return sum;
}

// One simulation as a record, and the note for a failing one.
std::pair<bj::object, std::string> tau2_simulation(const bj::value* info, const bj::value& s,
                                                   const std::string& where) {
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
  if (auto cost = side_cost(s, "agent_cost", "assistant")) rec["cost"] = *cost;
  if (auto cost = side_cost(s, "user_cost", "user")) rec["user_cost"] = *cost;
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
  return {std::move(rec), std::move(note)};
}

std::string id_of(const bj::value& v) {
  const bj::value* id = member(&v, {"id"});
  return id && id->is_string() ? std::string(id->get_string()) : "";
}

// The directory format: each simulation in its own file, checked against
// the index as τ²-bench's Results.load checks it (no file missing, none
// extra), so that a half-copied directory is never read as a smaller run.
std::vector<Located> tau2_directory(const bj::value* info, const bj::array& index, const Input& in) {
  if (in.simulations.empty())
    throw Error(Exit::bad_input,
                in.file + ": a τ²-bench results.json of the directory format (a \"simulation_index\", "
                          "no \"simulations\"); expected its simulations/ directory beside it (give "
                          "gate analyze the directory or that results.json)");
  std::vector<std::string> indexed;
  for (std::size_t i = 0; i < index.size(); ++i) {
    std::string id = id_of(index[i]);
    if (id.empty())
      bad(in.file + ": simulation_index[" + std::to_string(i) + "]", "id", "a string (the simulation's id)",
          member(&index[i], {"id"}));
    indexed.push_back(std::move(id));
  }
  std::vector<Located> out;
  std::vector<std::string> seen;
  for (const Input& part : in.simulations) {
    bj::value s = json::parse_strict(part.text, part.file);
    if (!s.is_object())
      throw Error(Exit::bad_input,
                  part.file + ": expected a simulation (a JSON object), got " + json::kind_name(s));
    const std::string id = id_of(s);
    if (std::find(indexed.begin(), indexed.end(), id) == indexed.end())
      throw Error(Exit::bad_input, part.file + ": simulation \"" + id + "\" is not in " + in.file +
                                       "'s simulation_index; expected only the indexed simulations");
    seen.push_back(id);
    auto [rec, note] = tau2_simulation(info, s, part.file);
    out.push_back({std::move(rec), part.file, std::move(note)});
  }
  for (const auto& id : indexed)
    if (std::find(seen.begin(), seen.end(), id) == seen.end())
      throw Error(Exit::bad_input, in.file + ": simulation_index names \"" + id +
                                       "\", whose file is missing from simulations/; expected every indexed "
                                       "simulation");
  return out;
}

} // namespace

std::vector<Located> tau2_records(const bj::value& v, const Input& in) {
  if (!is_tau2(v))
    not_the_format(in.file, "a τ²-bench results file (an object with \"info\" and a \"simulations\" list)",
                   v);
  const bj::value* info = member(&v, {"info"});
  const bj::value* sims = member(&v, {"simulations"});
  if (!sims || !sims->is_array()) return tau2_directory(info, v.at("simulation_index").get_array(), in);
  return each_object(
      sims->get_array(), in.file + ": simulations[", "a simulation",
      [info](const bj::value& s, const std::string& where) { return tau2_simulation(info, s, where); });
}

} // namespace gate::ingest::detail
