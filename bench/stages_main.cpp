// gate-bench-stages: where the time of a replayed `gate run` goes.
//
//   gate-bench-stages CONFIG [--out DIR]
//
// Runs the stages of `gate run --mode replay-only` on one thread, calling the
// library functions the runner calls, and prints each stage's CPU time per
// replayed run (and its wall time). Each per-run step is one pass over all
// runs, so that it is timed with two clock reads rather than two per run,
// and in CPU time, which other processes on a shared machine disturb far
// less than wall time. The per-run steps mirror run::execute's
// execute_one/score (runner.cpp), which are internal to the runner; the
// whole run::execute is then timed at concurrency 1 and at the configured
// concurrency for comparison. Output files go to DIR (default:
// <outputs.dir>/stages).
#include <algorithm>
#include <boost/json/parse.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <set>
#include <sys/resource.h>
#include <vector>

#include <gate/cache/line.hpp>
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
#include <gate/run/select.hpp>
#include <gate/suite/suite.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/input.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/sha256.hpp>
#include <gate/util/text.hpp>
#include <gate/util/time.hpp>

namespace {

namespace fs = std::filesystem;

struct Timing {
  double wall_us = 0, cpu_us = 0;
};

double cpu_now_us() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

template <class F> Timing measure(F&& f) {
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_now_us();
  f();
  return {std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - wall0).count(),
          cpu_now_us() - cpu0};
}

struct Stage {
  std::string name;
  Timing t;
  bool detail = false; // a part of the stage above, measured in its own pass; not summed
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

// Store::get again, in parts, one pass each: reading the file, the checksum
// over it, and the whole decode (checksum included), so that "decode −
// checksum" is the JSON part. What remains of Store::get beyond these is
// its own overhead (two opens: the shard directory, then the entry).
std::vector<Stage> store_get_parts(const gate::cache::Store& store, const std::vector<std::string>& keys) {
  std::vector<std::string> bytes(keys.size());
  const Timing read = measure([&] {
    for (std::size_t j = 0; j < keys.size(); ++j)
      bytes[j] = gate::read_file(store.path_for(keys[j]));
  });
  const Timing sum = measure([&] {
    for (const auto& b : bytes)
      if (gate::sha256_hex(std::string_view(b).substr(0, b.rfind("sha256 "))).size() != 64)
        throw gate::Error(gate::Exit::cannot_run, "sha256_hex returned no digest");
  });
  const Timing decode = measure([&] {
    for (std::size_t j = 0; j < keys.size(); ++j)
      if (!gate::cache::decode(bytes[j], keys[j]).entry)
        throw gate::Error(gate::Exit::cannot_run, "entry " + keys[j] + " does not decode");
  });
  // The JSON line alone through each of decode's two readers: whether the
  // one-pass reader (scan_line) still pays for its 300 lines over the full
  // parse it falls back to.
  std::vector<std::string_view> lines(bytes.size());
  for (std::size_t j = 0; j < bytes.size(); ++j) {
    const std::string_view b = bytes[j];
    const std::size_t start = b.find('\n') + 1;
    lines[j] = b.substr(start, b.find('\n', start) - start);
  }
  const auto version = [&](std::size_t j) { return bytes[j].starts_with("gate-cache 2\n") ? 2 : 1; };
  const Timing scan = measure([&] {
    for (std::size_t j = 0; j < keys.size(); ++j)
      if (!gate::cache::detail::scan_line(lines[j], version(j), keys[j]))
        throw gate::Error(gate::Exit::cannot_run, "entry " + keys[j] + " is not read by scan_line");
  });
  const Timing full = measure([&] {
    for (std::size_t j = 0; j < keys.size(); ++j)
      if (!gate::cache::detail::parse_line(lines[j], version(j), keys[j]).entry)
        throw gate::Error(gate::Exit::cannot_run, "entry " + keys[j] + " is not read by parse_line");
  });
  return {{"  part: read_file (open, fstat, read)", read, true},
          {"  part: checksum (sha256 of the entry)", sum, true},
          {"  part: decode JSON (cache::decode - checksum)",
           {decode.wall_us - sum.wall_us, decode.cpu_us - sum.cpu_us},
           true},
          {"    the JSON line by scan_line (decode's fast path)", scan, true},
          {"    the JSON line by parse_line (the full parse)", full, true}};
}

void print(const std::vector<Stage>& stages, std::size_t runs) {
  Timing total;
  for (const auto& st : stages) {
    if (st.detail) continue;
    total.wall_us += st.t.wall_us;
    total.cpu_us += st.t.cpu_us;
  }
  const auto n = static_cast<double>(runs);
  std::printf("%-54s %9s %9s %7s %9s\n", "stage", "cpu ms", "cpu us/run", "share", "wall ms");
  for (const auto& st : stages)
    std::printf("%-54s %9.1f %9.2f %6.1f%% %9.1f\n", st.name.c_str(), st.t.cpu_us / 1000, st.t.cpu_us / n,
                100 * st.t.cpu_us / total.cpu_us, st.t.wall_us / 1000);
  std::printf("%-54s %9.1f %9.2f %7s %9.1f\n", "sum of stages", total.cpu_us / 1000, total.cpu_us / n, "",
              total.wall_us / 1000);
}

int run(int argc, char** argv) {
  using namespace gate;
  if (argc != 2 && !(argc == 4 && std::string(argv[2]) == "--out")) {
    std::cerr << "usage: gate-bench-stages CONFIG [--out DIR]\n";
    return static_cast<int>(Exit::bad_input);
  }
  std::vector<Stage> stages;
  config::Config cfg;
  stages.push_back({"config load", measure([&] {
                      cfg = config::load(argv[1]);
                      cfg.cache.mode = config::CacheMode::replay_only;
                      cfg.cache.mode_set = true;
                      config::resolve_defaults(cfg, gate::Environment{});
                    })});
  const fs::path out_dir = argc == 4 ? fs::path(argv[3]) : cfg.outputs.dir / "stages";
  fs::create_directories(out_dir);

  suite::Suite s;
  stages.push_back({"suite load (read, sha256, parse, compile checks)",
                    measure([&] { s = suite::load(cfg.suite, cfg.suite_version); })});
  std::vector<const suite::Case*> cases;
  std::vector<run::PreparedRequest> prepared;
  stages.push_back({"select + prepare (request body, fingerprint)", measure([&] {
                      cases = run::select(s, cfg);
                      for (const auto* c : cases)
                        prepared.push_back(run::prepare(*c, cfg));
                    })});

  cache::Store store(cfg.cache.dir);
  const std::size_t k = static_cast<std::size_t>(cfg.runs);
  const std::size_t runs = cases.size() * k;
  run::Outcome outcome;
  outcome.tasks.resize(cases.size());
  std::vector<results::Run*> slot(runs); // slot j = case j / k, replica j % k
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    results::Task& task = outcome.tasks[ci];
    task.id = cases[ci]->id;
    task.scenario = cases[ci]->scenario;
    task.difficulty = cases[ci]->difficulty;
    task.group = cases[ci]->group;
    task.runs.resize(k);
    for (std::size_t r = 0; r < k; ++r) {
      slot[ci * k + r] = &task.runs[r];
      task.runs[r].index = static_cast<int>(r);
      task.runs[r].fingerprint = prepared[ci].fingerprint;
      task.runs[r].checks.resize(cases[ci]->checks.size());
    }
  }
  auto call_of = [&](std::size_t j) -> const model::ApiCall& { return prepared[j / k].call; };

  std::vector<std::string> keys(runs);
  stages.push_back({"cache key (sha256)", measure([&] {
                      for (std::size_t j = 0; j < runs; ++j)
                        keys[j] = cache::make_key(call_of(j).provider, call_of(j).path,
                                                  prepared[j / k].hashed_body, static_cast<int>(j % k));
                    })});
  std::vector<cache::Lookup> found(runs);
  stages.push_back({"store get (open, read, verify sha256, decode JSON)", measure([&] {
                      for (std::size_t j = 0; j < runs; ++j)
                        found[j] = store.get(keys[j]);
                    })});
  for (std::size_t j = 0; j < runs; ++j)
    if (!found[j].entry)
      throw Error(Exit::cache_miss, "task " + cases[j / k]->id + " run " + std::to_string(j % k) +
                                        " is not in the cache: " + found[j].corrupt_reason);
  for (auto& st : store_get_parts(store, keys))
    stages.push_back(std::move(st));

  stages.push_back({"route parse (entry route JSON -> map)", measure([&] {
                      for (std::size_t j = 0; j < runs; ++j) {
                        slot[j]->route = route_from_json(found[j].entry->route);
                        slot[j]->cache_hit = true;
                      }
                    })});
  std::vector<model::Reply> replies(runs);
  stages.push_back({"parse_response (body JSON -> reply)", measure([&] {
                      for (std::size_t j = 0; j < runs; ++j) {
                        model::ApiResponse response;
                        response.status = found[j].entry->status;
                        response.headers = std::move(found[j].entry->headers);
                        response.body = std::move(found[j].entry->body);
                        replies[j] = model::parse_response(call_of(j).provider, response);
                      }
                    })});
  found = {};
  stages.push_back({"answer (tokens, redact, cut, normalize, sha256)", measure([&] {
                      for (std::size_t j = 0; j < runs; ++j) {
                        results::Run& run = *slot[j];
                        const model::Reply& reply = replies[j];
                        if (reply.usage) {
                          run.prompt_tokens = reply.usage->prompt_tokens;
                          run.completion_tokens = reply.usage->completion_tokens;
                        }
                        const std::string redacted = redact(reply.text);
                        run.answer = std::string(utf8_prefix(redacted, results::k_answer_limit));
                        run.answer_truncated = run.answer.size() < redacted.size();
                        run.answer_sha256 = sha256_hex(run::normalize_answer(reply.text));
                      }
                    })});

  // Checks, one pass per check type so that each type's cost shows.
  std::set<check::Type> types;
  for (const auto* c : cases)
    for (const auto& chk : c->checks)
      types.insert(chk.type);
  std::vector<Stage> by_type;
  Timing checks;
  for (const auto& type : types) {
    std::size_t evaluations = 0;
    const Timing t = measure([&] {
      for (std::size_t j = 0; j < runs; ++j) {
        const auto& list = cases[j / k]->checks;
        for (std::size_t i = 0; i < list.size(); ++i) {
          if (list[i].type != type) continue;
          const check::Result r = check::evaluate(list[i], replies[j].text);
          slot[j]->checks[i] = {r.label, r.passed, r.detail};
          if (r.errored) slot[j]->error = "check";
          ++evaluations;
        }
      }
    });
    checks.wall_us += t.wall_us;
    checks.cpu_us += t.cpu_us;
    by_type.push_back(
        {"  part: " + check::type_name(type) + " (" + std::to_string(evaluations) + " x " +
             std::to_string(static_cast<long>(t.cpu_us * 1000 / static_cast<double>(evaluations))) + " ns)",
         t, true});
  }
  stages.push_back({"checks evaluate", checks});
  stages.insert(stages.end(), by_type.begin(), by_type.end());
  std::size_t passed = 0;
  for (std::size_t j = 0; j < runs; ++j) {
    slot[j]->passed =
        slot[j]->error.empty() && std::all_of(slot[j]->checks.begin(), slot[j]->checks.end(),
                                              [](const results::CheckResult& c) { return c.passed; });
    passed += slot[j]->passed ? 1 : 0;
  }
  replies = {};

  report::Report r;
  stages.push_back({"assemble (sort + report::compute)", measure([&] {
                      r = run::assemble(std::move(outcome), s, cfg, utc_now_iso(), utc_now_iso());
                    })});
  std::string json;
  stages.push_back({"report::to_json", measure([&] { json = report::to_json(r); })});
  stages.push_back(
      {"write report.json", measure([&] { write_file_atomically(out_dir / "report.json", json); })});
  stages.push_back({"render + write report.md", measure([&] {
                      write_file_atomically(out_dir / "report.md", render::report_markdown(r));
                    })});
  stages.push_back({"render + write report.xml", measure([&] {
                      write_file_atomically(out_dir / "report.xml", render::report_junit(r));
                    })});

  std::printf("%zu tasks x %zu runs = %zu runs replayed on 1 thread (%zu passed); report.json %.1f MB\n",
              cases.size(), k, runs, passed, static_cast<double>(json.size()) / 1e6);
  print(stages, runs);
  std::printf("peak RSS of this program %.0f MB (not gate's: it holds every entry at once)\n", peak_rss_mb());

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
    std::size_t misses = 0;
    const Timing t = measure([&] { misses = run::execute(in, {}).misses.size(); });
    std::printf("run::execute at concurrency %d: wall %.1f ms (%.2f us/run), cpu %.1f ms (%.2f us/run), %zu "
                "misses\n",
                workers, t.wall_us / 1000, t.wall_us / static_cast<double>(runs), t.cpu_us / 1000,
                t.cpu_us / static_cast<double>(runs), misses);
    if (workers == configured) break;
  }
  return 0;
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
