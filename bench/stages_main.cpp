// gate-bench-stages: where the time of a replayed `gate run` goes.
//
//   gate-bench-stages CONFIG [--out DIR]
//
// Runs the stages of `gate run --mode replay-only` one after the other on
// one thread, calling the same library functions the runner calls, and
// prints each stage's total and its cost per run. The per-run steps mirror
// run::execute's execute_one/score (runner.cpp), which are internal to the
// runner; then the whole run::execute is timed at concurrency 1 and at the
// configured concurrency for comparison. Output files go to DIR (default:
// <outputs.dir>/stages).
#include <boost/json/parse.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <sys/resource.h>
#include <vector>

#include <gate/cache/store.hpp>
#include <gate/check/check.hpp>
#include <gate/config/config.hpp>
#include <gate/model/api.hpp>
#include <gate/render/junit.hpp>
#include <gate/render/markdown.hpp>
#include <gate/report/report.hpp>
#include <gate/run/assemble.hpp>
#include <gate/run/request.hpp>
#include <gate/run/runner.hpp>
#include <gate/suite/suite.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/sha256.hpp>
#include <gate/util/text.hpp>
#include <gate/util/time.hpp>

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

struct Stage {
  std::string name;
  double us = 0;
  bool per_run = true; // false: a whole-run stage, shown per run as its share
  bool detail = false; // a part of the stage above, measured in a second pass; not summed
};

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0; // ru_maxrss is in KiB on Linux
}

// runner.cpp's route_from_json, which is internal to the runner.
gate::results::Route route_from_json(const std::string& text) {
  gate::results::Route r;
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(text, ec);
  if (ec || !v.is_object()) return r;
  for (const auto& kv : v.get_object())
    if (kv.value().is_string()) r[std::string(kv.key())] = std::string(kv.value().get_string());
  return r;
}

// Store::get again, in parts: reading the file, the checksum over it, and
// the whole decode (checksum included), so "decode − checksum" is the JSON.
std::vector<Stage> store_get_parts(const gate::cache::Store& store, const std::vector<std::string>& keys) {
  double read_us = 0, sum_us = 0, decode_us = 0;
  for (const auto& key : keys) {
    auto t0 = Clock::now();
    const std::string bytes = gate::read_file(store.path_for(key));
    auto t1 = Clock::now();
    const std::string digest = gate::sha256_hex(std::string_view(bytes).substr(0, bytes.rfind("sha256 ")));
    auto t2 = Clock::now();
    const gate::cache::DecodeResult r = gate::cache::decode(bytes, key);
    auto t3 = Clock::now();
    if (!r.entry || digest.size() != 64)
      throw gate::Error(gate::Exit::cannot_run, "entry " + key + ": " + r.reason);
    read_us += std::chrono::duration<double, std::micro>(t1 - t0).count();
    sum_us += std::chrono::duration<double, std::micro>(t2 - t1).count();
    decode_us += std::chrono::duration<double, std::micro>(t3 - t2).count();
  }
  return {{"  part: read_file (open, fstat, read)", read_us, true, true},
          {"  part: checksum (sha256 of the entry)", sum_us, true, true},
          {"  part: decode JSON (cache::decode - checksum)", decode_us - sum_us, true, true}};
}

int run(int argc, char** argv) {
  using namespace gate;
  if (argc != 2 && !(argc == 4 && std::string(argv[2]) == "--out")) {
    std::cerr << "usage: gate-bench-stages CONFIG [--out DIR]\n";
    return static_cast<int>(Exit::bad_input);
  }
  std::vector<Stage> stages;
  auto t0 = Clock::now();
  config::Config cfg = config::load(argv[1]);
  cfg.cache.mode = config::CacheMode::replay_only;
  cfg.cache.mode_set = true;
  config::resolve_defaults(cfg);
  stages.push_back({"config load", us_since(t0), false});
  const fs::path out_dir = argc == 4 ? fs::path(argv[3]) : cfg.outputs.dir / "stages";
  fs::create_directories(out_dir);

  t0 = Clock::now();
  const suite::Suite s = suite::load(cfg.suite, cfg.suite_version);
  stages.push_back({"suite load (read, sha256, parse, compile checks)", us_since(t0), false});

  t0 = Clock::now();
  const std::vector<const suite::Case*> cases = run::select(s, cfg);
  std::vector<run::PreparedRequest> prepared;
  prepared.reserve(cases.size());
  for (const auto* c : cases)
    prepared.push_back(run::prepare(*c, cfg));
  stages.push_back({"select + prepare (request body, fingerprint)", us_since(t0), false});

  cache::Store store(cfg.cache.dir);
  const std::size_t k = static_cast<std::size_t>(cfg.runs);
  run::Outcome outcome;
  outcome.tasks.resize(cases.size());
  double key_us = 0, get_us = 0, route_us = 0, parse_us = 0, answer_us = 0, checks_us = 0;
  std::size_t misses = 0, passed = 0;
  std::vector<std::string> keys;
  std::map<std::string, std::pair<double, std::size_t>> by_type; // check type: us, evaluations
  keys.reserve(cases.size() * k);
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const suite::Case& c = *cases[ci];
    const run::PreparedRequest& p = prepared[ci];
    results::Task& task = outcome.tasks[ci];
    task.id = c.id;
    task.scenario = c.scenario;
    task.difficulty = c.difficulty;
    task.group = c.group;
    task.runs.resize(k);
    for (std::size_t replica = 0; replica < k; ++replica) {
      results::Run& run = task.runs[replica];
      run.index = static_cast<int>(replica);
      run.fingerprint = p.fingerprint;
      t0 = Clock::now();
      const std::string key = cache::make_key(p.call.provider, p.call.path, p.hashed_body, run.index);
      keys.push_back(key);
      auto t1 = Clock::now();
      cache::Lookup found = store.get(key);
      auto t2 = Clock::now();
      key_us += std::chrono::duration<double, std::micro>(t1 - t0).count();
      get_us += std::chrono::duration<double, std::micro>(t2 - t1).count();
      if (!found.entry) {
        ++misses;
        continue;
      }
      t0 = Clock::now();
      run.route = route_from_json(found.entry->route);
      run.cache_hit = true;
      route_us += us_since(t0);

      t0 = Clock::now();
      model::ApiResponse response;
      response.status = found.entry->status;
      response.headers = std::move(found.entry->headers);
      response.body = std::move(found.entry->body);
      const model::Reply reply = model::parse_response(p.call.provider, response);
      parse_us += us_since(t0);

      t0 = Clock::now();
      if (reply.usage) {
        run.prompt_tokens = reply.usage->prompt_tokens;
        run.completion_tokens = reply.usage->completion_tokens;
      }
      const std::string redacted = redact(reply.text);
      run.answer = std::string(utf8_prefix(redacted, results::k_answer_limit));
      run.answer_truncated = run.answer.size() < redacted.size();
      run.answer_sha256 = sha256_hex(run::normalize_answer(reply.text));
      answer_us += us_since(t0);

      run.passed = true;
      for (const auto& chk : c.checks) {
        t0 = Clock::now();
        check::Result r = check::evaluate(chk, reply.text);
        run.passed = run.passed && r.passed;
        run.checks.push_back({r.label, r.passed, r.detail});
        const double us = us_since(t0);
        checks_us += us;
        by_type[chk.type].first += us;
        by_type[chk.type].second += 1;
      }
      passed += run.passed ? 1 : 0;
    }
  }
  stages.push_back({"cache key (sha256)", key_us});
  stages.push_back({"store get (open, read, verify sha256, decode JSON)", get_us});
  for (auto& st : store_get_parts(store, keys))
    stages.push_back(std::move(st));
  stages.push_back({"route parse (entry route JSON -> map)", route_us});
  stages.push_back({"parse_response (body JSON -> reply)", parse_us});
  stages.push_back({"answer (redact, cut, normalize, sha256)", answer_us});
  stages.push_back({"checks evaluate", checks_us});
  for (const auto& [type, cost] : by_type)
    stages.push_back({"  part: " + type + " (" + std::to_string(cost.second) + " evaluations, " +
                          std::to_string(static_cast<int>(cost.first * 1000 / cost.second)) + " ns each)",
                      cost.first, true, true});

  t0 = Clock::now();
  report::Report r = run::assemble(std::move(outcome), s, cfg, utc_now_iso(), utc_now_iso());
  stages.push_back({"assemble (sort + report::compute)", us_since(t0), false});
  t0 = Clock::now();
  const std::string json = report::to_json(r);
  stages.push_back({"report::to_json", us_since(t0), false});
  t0 = Clock::now();
  write_file_atomically(out_dir / "report.json", json);
  stages.push_back({"write report.json", us_since(t0), false});
  t0 = Clock::now();
  write_file_atomically(out_dir / "report.md", render::report_markdown(r));
  stages.push_back({"render + write report.md", us_since(t0), false});
  t0 = Clock::now();
  write_file_atomically(out_dir / "report.xml", render::report_junit(r));
  stages.push_back({"render + write report.xml", us_since(t0), false});

  const std::size_t runs = cases.size() * k;
  double total = 0;
  for (const auto& st : stages)
    total += st.detail ? 0 : st.us;
  std::printf("%zu tasks x %zu runs = %zu runs replayed on 1 thread (%zu misses, %zu passed)\n", cases.size(),
              k, runs, misses, passed);
  std::printf("%-52s %10s %10s %7s\n", "stage", "total ms", "us/run", "share");
  for (const auto& st : stages)
    std::printf("%-52s %10.1f %10.2f %6.1f%%\n", st.name.c_str(), st.us / 1000,
                st.us / static_cast<double>(runs), 100 * st.us / total);
  std::printf("%-52s %10.1f %10.2f\n", "sum of stages", total / 1000, total / static_cast<double>(runs));
  std::printf("report.json %.1f MB, peak RSS so far %.0f MB\n", static_cast<double>(json.size()) / 1e6,
              peak_rss_mb());

  // The whole runner, for comparison with the sum of its steps.
  run::Inputs in;
  in.suite = &s;
  in.cases = cases;
  in.config = &cfg;
  in.store = &store;
  in.client = []() -> model::ModelClient& { throw Error(Exit::cannot_run, "bench: no fresh calls"); };
  const int configured = cfg.concurrency;
  for (int workers : {1, configured}) {
    cfg.concurrency = workers;
    t0 = Clock::now();
    run::Outcome o = run::execute(in, {});
    const double us = us_since(t0);
    std::printf("run::execute at concurrency %d: %.1f ms, %.2f us/run (%zu misses)\n", workers, us / 1000,
                us / static_cast<double>(runs), o.misses.size());
    if (workers == configured) break;
  }
  return misses == 0 ? 0 : static_cast<int>(Exit::cache_miss);
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const gate::Error& e) {
    std::cerr << "gate-bench-stages: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::cerr << "gate-bench-stages: " << e.what() << "\n";
    return static_cast<int>(gate::Exit::cannot_run);
  }
}
