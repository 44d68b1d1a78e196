#include <gate/agent/agent.hpp>

#include <algorithm>
#include <cstdio>
#include <unistd.h>

#include <gate/agent/checks.hpp>
#include <gate/agent/process.hpp>
#include <gate/agent/workcopy.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>

namespace gate::agent {

namespace {

std::string var_name(std::string_view entry) { return std::string(entry.substr(0, entry.find('='))); }

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

void fail_run(results::Run& out, const std::string& message) {
  out.error = "agent";
  out.error_message = redact(message);
  out.passed = false;
}

} // namespace

std::string run_seed(const config::Config& cfg, int run) {
  return std::to_string(cfg.model.seed.value_or(0) + run);
}

std::vector<std::string> secret_env_names(const config::Config& cfg) {
  std::vector<std::string> names;
  for (const std::string* n : {&cfg.model.api_key_env, &cfg.cache.remote_auth_env})
    if (!n->empty()) names.push_back(*n);
  return names;
}

std::vector<std::string> child_env(const Environment& parent, const config::Config& cfg,
                                   const std::vector<std::string>& set) {
  const std::vector<std::string> secret_names = secret_env_names(cfg);
  std::vector<std::string> secrets;
  for (const std::string& n : secret_names)
    if (std::string v = parent.get(n); !v.empty()) secrets.push_back(std::move(v));
  std::vector<std::string> ours = {"OPENAI_API_KEY=" + std::string(k_dummy_key),
                                   "ANTHROPIC_API_KEY=" + std::string(k_dummy_key)};
  ours.insert(ours.end(), set.begin(), set.end());
  std::vector<std::string> env;
  for (const std::string& entry : parent.entries) {
    const std::string name = var_name(entry);
    if (std::find(secret_names.begin(), secret_names.end(), name) != secret_names.end()) continue;
    if (std::any_of(ours.begin(), ours.end(), [&](const std::string& o) { return var_name(o) == name; }))
      continue;
    // A copy of a secret under another name (COPY="Bearer $KEY") is a secret too.
    if (std::any_of(secrets.begin(), secrets.end(),
                    [&](const std::string& v) { return entry.find(v) != std::string::npos; }))
      continue;
    env.emplace_back(entry);
  }
  env.insert(env.end(), ours.begin(), ours.end());
  std::sort(env.begin(), env.end());
  return env;
}

// argv[0] with a '/' but relative names a program shipped with the suite;
// a bare name is looked up in PATH, then next to the gate binary (so the
// example agent built with gate runs from the build directory as is).
std::vector<std::string> resolve_command(std::vector<std::string> argv,
                                         const std::filesystem::path& suite_dir, const std::string& path) {
  std::string& program = argv.front();
  if (program.find('/') != std::string::npos) {
    if (program.front() != '/')
      program = std::filesystem::absolute(suite_dir / program).lexically_normal().string();
    return argv;
  }
  std::string_view dirs = path;
  while (!dirs.empty()) {
    std::string_view dir = dirs.substr(0, dirs.find(':'));
    dirs.remove_prefix(std::min(dirs.size(), dir.size() + 1));
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return argv;
  }
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec && ::access((self.parent_path() / program).c_str(), X_OK) == 0)
    program = (self.parent_path() / program).string();
  return argv;
}

std::vector<std::string> agent_env(const Environment& parent, const config::Config& cfg,
                                   const std::string& base_url, const std::string& task_id, int run,
                                   const std::string& seed) {
  return child_env(parent, cfg,
                   {"OPENAI_BASE_URL=" + base_url, "ANTHROPIC_BASE_URL=" + base_url,
                    "GATE_TASK_ID=" + task_id, "GATE_RUN=" + std::to_string(run), "GATE_SEED=" + seed});
}

JobResult run_job(const Job& job, results::Run& out) {
  JobResult res;
  const suite::Case& c = *job.task;
  const suite::AgentSpec& spec = *c.agent;
  const std::string input = c.input.front().content;
  std::filesystem::path work;
  try {
    work = make_work_copy(spec.fixture_dir, job.workdir_root);
  } catch (const Error& e) {
    fail_run(out, e.what());
    return res;
  }
  try {
    if (!spec.input_file.empty()) write_inside(work, spec.input_file, input);
    ProcessSpec ps;
    ps.argv = resolve_command(spec.command, job.suite->dir, job.env->get("PATH"));
    ps.cwd = work;
    ps.env = agent_env(*job.env, *job.config, job.tap->base_url(c.id, job.run), c.id, job.run,
                       run_seed(*job.config, job.run));
    ps.stdin_text = spec.input_file.empty() ? input : "";
    ps.timeout_s = spec.timeout_s;
    ps.stop = job.stop;
    ProcessResult pr = run_process(ps);
    ScopeLog log = job.tap->take(c.id, job.run);
    res.missing_keys = log.missing_keys;
    res.untrusted = log.untrusted;
    res.tampered = log.tampered;
    res.record_error = log.record_error;
    out.tool_calls = log.tool_calls;
    out.prompt_tokens = log.prompt_tokens;
    out.completion_tokens = log.completion_tokens;
    out.usage_known = log.usage_known;
    out.cache_hit = log.requests > 0 && log.cache_hits == log.requests;

    results::AgentRun a;
    a.exit_code = pr.exit_code;
    a.timed_out = pr.timed_out;
    a.stdout_excerpt = redact(pr.out);
    a.stderr_excerpt = redact(pr.err);
    if (!pr.started) {
      out.agent = a;
      // A bare name that is found nowhere: say where gate looked, the
      // likeliest fix for the bundled example agent (built with gate).
      const bool bare = spec.command.front().find('/') == std::string::npos;
      fail_run(out, bare && ps.argv.front() == spec.command.front()
                        ? pr.start_error +
                              " (looked in PATH and next to the gate binary; build it, or give a path)"
                        : pr.start_error);
    } else {
      const Tree fixture = read_tree(spec.fixture_dir);
      const Tree final = read_tree(work);
      a.final_state_hash = state_hash(final);
      out.answer_sha256 = a.final_state_hash;
      out.agent = a;
      if (pr.timed_out) {
        fail_run(out, "timed out after " + seconds(spec.timeout_s) + " s; its process group was killed");
      } else if (pr.stopped) {
        fail_run(out, "stopped by a signal to gate");
        res.interrupted = true;
      } else {
        CheckContext ctx{work, &fixture, &final, &pr, &out.tool_calls, ps.env, job.stop};
        out.passed = true;
        for (const auto& chk : c.checks) {
          check::Result r = evaluate(chk, ctx);
          out.passed = out.passed && r.passed;
          out.checks.push_back({r.label, r.passed, r.detail});
          if (r.errored) {
            out.error = "check";
            out.error_message = redact(r.label + ": " + r.detail);
            out.passed = false;
          }
        }
      }
    }
  } catch (const std::exception& e) {
    fail_run(out, e.what());
  }
  if (job.keep_workdir)
    res.kept_workdir = work;
  else
    remove_work_copy(work);
  return res;
}

} // namespace gate::agent
