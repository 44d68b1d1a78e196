#include <gate/run/script.hpp>

#include <boost/json.hpp>
#include <exception>

#include <gate/agent/agent.hpp>
#include <gate/agent/process.hpp>
#include <gate/util/json.hpp>

namespace gate::run {

std::string case_json(const suite::Case& c) {
  boost::json::object o;
  o["id"] = c.id;
  if (!c.scenario.empty()) o["scenario"] = c.scenario;
  if (!c.difficulty.empty()) o["difficulty"] = c.difficulty;
  if (!c.group.empty()) o["group"] = c.group;
  boost::json::array input;
  for (const auto& m : c.input)
    input.push_back(boost::json::object{{"role", m.role}, {"content", m.content}});
  o["input"] = std::move(input);
  if (!c.system.empty()) o["system"] = c.system;
  if (!c.vars.empty()) {
    boost::json::object vars;
    for (const auto& [k, v] : c.vars)
      vars[k] = v;
    o["vars"] = std::move(vars);
  }
  if (c.expected) o["expected"] = *c.expected;
  if (!c.tags.empty()) {
    boost::json::array tags;
    for (const auto& t : c.tags)
      tags.emplace_back(t);
    o["tags"] = std::move(tags);
  }
  return json::canonical(o);
}

check::ScriptRun run_script(const check::Check& chk, std::string_view answer, const suite::Case& c, int run,
                            const ScriptSetup& setup) {
  check::ScriptRun out;
  try {
    if (setup.env == nullptr || setup.suite == nullptr || setup.config == nullptr) {
      out.start_error = "script checks need gate's environment and suite";
      return out;
    }
    const std::string case_text = case_json(c);
    if (case_text.size() > k_max_case_json) {
      out.start_error = "the case is " + std::to_string(case_text.size()) +
                        " bytes as JSON, more than GATE_CASE can hold (" + std::to_string(k_max_case_json) +
                        ")";
      return out;
    }
    agent::ProcessSpec ps;
    ps.argv = agent::resolve_command(chk.argv, setup.suite->dir, setup.env->get("PATH"));
    ps.cwd = setup.suite->dir;
    ps.env = agent::child_env(
        *setup.env, *setup.config,
        {"GATE_CASE=" + case_text, "GATE_TASK_ID=" + c.id, "GATE_RUN=" + std::to_string(run)});
    ps.stdin_text = std::string(answer);
    ps.timeout_s = chk.timeout_s;
    ps.stop = setup.stop;
    const agent::ProcessResult pr = agent::run_process(ps);
    out.started = pr.started;
    out.start_error = pr.start_error;
    out.timed_out = pr.timed_out;
    out.exit_code = pr.exit_code;
    out.signal = pr.signal;
    out.out = pr.out;
  } catch (const std::exception& e) {
    out.started = false;
    out.start_error = e.what();
  }
  return out;
}

} // namespace gate::run
