#include <bench/gen.hpp>

#include <algorithm>

#include <bench/data.hpp>
#include <gate/check/check.hpp>
#include <gate/config/config.hpp>
#include <gate/metrics/summary.hpp>
#include <gate/report/report.hpp>
#include <gate/run/assemble.hpp>
#include <gate/run/request.hpp>
#include <gate/run/runner.hpp>
#include <gate/suite/suite.hpp>
#include <gate/util/error.hpp>
#include <gate/util/sha256.hpp>
#include <gate/util/text.hpp>
#include <gate/util/time.hpp>
#include <gate/util/version.hpp>

namespace gate::bench {

namespace fs = std::filesystem;

namespace {

config::Config world_config(int world, int runs) {
  config::Config c;
  c.model.base_url = "http://127.0.0.1:9/v1";
  c.model.api_key_env = "GATE_BENCH_API_KEY";
  c.model.key_alias = "bench";
  c.model.name = world == 0 ? "bench-model" : "bench-model-2";
  c.runs = runs;
  c.concurrency = 2;
  return c;
}

// One run scored the way the runner scores a fresh response: checks,
// answer (cut at the report's limit), normalized-answer hash, tokens.
results::Run make_run(const suite::Case& c, const TaskText& t, const run::PreparedRequest& p,
                      const results::Route& route, std::size_t i, int replica, int world) {
  results::Run run;
  run.index = replica;
  run.fingerprint = p.fingerprint;
  run.route = route;
  const std::string answer = answer_for(t, i, replica, world);
  run.answer = std::string(utf8_prefix(answer, results::k_answer_limit));
  run.answer_truncated = run.answer.size() < answer.size();
  run.answer_sha256 = sha256_hex(run::normalize_answer(answer));
  run.prompt_tokens = prompt_tokens(t);
  // The current model is a little more verbose.
  run.completion_tokens = completion_tokens(answer) + (world == 0 ? 0 : 2);
  const double base_ms =
      300.0 + static_cast<double>(mix(i * 8 + static_cast<std::size_t>(replica)) % 120000) / 100.0;
  run.latency_ms = world == 0 ? base_ms : base_ms * 1.05;
  run.passed = true;
  for (const auto& chk : c.checks) {
    check::Result r = check::evaluate(chk, answer);
    run.passed = run.passed && r.passed;
    run.checks.push_back({r.label, r.passed, r.detail});
  }
  if (run.passed != replica_passes(i, replica, world))
    throw Error(Exit::bad_input, "bench content is inconsistent: task " + t.id + " run " +
                                     std::to_string(replica) + " was meant to " +
                                     (run.passed ? "fail" : "pass") + " its checks: \"" + answer + "\"");
  return run;
}

std::uint64_t write_world(const fs::path& file, std::size_t tasks, int runs, int world,
                          const std::string& suite_sha, std::vector<std::int64_t>& passes) {
  const config::Config cfg = world_config(world, runs);
  const results::Route route = run::configured_route(cfg);
  report::Report r;
  r.gate_version = k_version;
  r.suite = {"bench", "v1", suite_sha};
  r.config = config::to_json(cfg);
  r.route = route;
  r.started_at = utc_now_iso();
  r.tasks.reserve(tasks);
  passes.assign(tasks, 0);
  for (std::size_t i = 0; i < tasks; ++i) {
    const TaskText t = make_task(i);
    // One line at a time keeps the generator's memory at one report.
    const std::vector<suite::Case> parsed = suite::parse_cases(case_line(t), "bench case " + t.id);
    const suite::Case& c = parsed.front();
    const run::PreparedRequest p = run::prepare(c, cfg);
    results::Task task;
    task.id = c.id;
    task.scenario = c.scenario;
    task.difficulty = c.difficulty;
    task.group = c.group;
    for (int k = 0; k < runs; ++k) {
      task.runs.push_back(make_run(c, t, p, route, i, k, world));
      passes[i] += task.runs.back().passed ? 1 : 0;
    }
    r.tasks.push_back(std::move(task));
  }
  std::sort(r.tasks.begin(), r.tasks.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  r.finished_at = utc_now_iso();
  report::compute(r, report::options_from_config(r.config, file.string()));
  report::write(r, file);
  return fs::file_size(file);
}

} // namespace

ReportsSummary write_reports(const fs::path& dir, std::size_t tasks, int runs) {
  if (tasks == 0 || runs < 1) throw Error(Exit::bad_input, "gate-bench-gen: --tasks and --runs must be >= 1");
  fs::create_directories(dir);
  Sha256 suite_hash;
  for (std::size_t i = 0; i < tasks; ++i)
    suite_hash.update(case_line(make_task(i)) + "\n");
  const std::string sha = suite_hash.hex();

  ReportsSummary out;
  std::vector<std::int64_t> base_passes, current_passes;
  out.baseline_bytes = write_world(dir / "baseline.json", tasks, runs, 0, sha, base_passes);
  out.current_bytes = write_world(dir / "current.json", tasks, runs, 1, sha, current_passes);
  out.baseline_tasks = out.current_tasks = tasks;
  for (std::size_t i = 0; i < tasks; ++i)
    out.changed_tasks += base_passes[i] != current_passes[i] ? 1 : 0;
  return out;
}

} // namespace gate::bench
