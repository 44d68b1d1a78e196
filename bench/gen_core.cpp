#include <bench/gen.hpp>

#include <boost/json/object.hpp>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <bench/data.hpp>
#include <gate/cache/store.hpp>
#include <gate/config/config.hpp>
#include <gate/run/request.hpp>
#include <gate/run/runner.hpp>
#include <gate/suite/suite.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/sha256.hpp>
#include <gate/util/time.hpp>

namespace gate::bench {

namespace fs = std::filesystem;

namespace {

std::string gate_yaml(const CoreOptions& o) {
  return "# Written by gate-bench-gen (bench/README.md): " + std::to_string(o.tasks) + " tasks x " +
         std::to_string(o.runs) +
         " runs, every response already\n"
         "# in the cache, so `gate run` replays them without a network.\n"
         "suite:\n"
         "  path: suite\n"
         "  version: v1\n"
         "model:\n"
         "  provider: openai\n"
         "  base_url: http://127.0.0.1:9/v1\n"
         "  api_key_env: GATE_BENCH_API_KEY\n"
         "  key_alias: bench\n"
         "  name: bench-model\n"
         "runs: " +
         std::to_string(o.runs) + "\nconcurrency: " + std::to_string(o.concurrency) +
         "\n"
         "cache:\n"
         "  dir: cache\n"
         "  mode: replay-only\n"
         "outputs:\n"
         "  dir: out\n";
}

std::string route_text(const config::Config& cfg) {
  boost::json::object o;
  for (const auto& [k, v] : run::configured_route(cfg))
    o[k] = v;
  return json::canonical(o);
}

// Writes the entries of tasks first, first + step, ... ; one per thread.
void write_entries(const suite::Suite& s, const config::Config& cfg, cache::Store& store,
                   const std::string& route, const std::string& recorded_at, std::size_t first,
                   std::size_t step) {
  for (std::size_t i = first; i < s.cases.size(); i += step) {
    const suite::Case& c = s.cases[i];
    const TaskText t = make_task(i);
    if (c.id != t.id)
      throw Error(Exit::bad_input, "case " + std::to_string(i) + " of the written suite reads back as \"" +
                                       c.id + "\", expected \"" + t.id + "\"");
    const run::PreparedRequest p = run::prepare(c, cfg);
    for (int r = 0; r < cfg.runs; ++r) {
      const std::string answer = answer_for(t, i, r, 0);
      const std::int64_t prompt = prompt_tokens(t), completion = completion_tokens(answer);
      cache::Entry e;
      e.key = cache::make_key(p.call.provider, p.call.path, p.hashed_body, r);
      e.provider = p.call.provider;
      e.path = p.call.path;
      e.replica = r;
      e.request = p.hashed_body;
      e.status = 200;
      e.headers = {{"content-type", "application/json"}};
      e.body = chat_completion("chatcmpl-bench-" + std::to_string(i) + "-" + std::to_string(r),
                               cfg.model.name, answer, prompt, completion);
      e.usage = std::make_pair(prompt, completion);
      e.latency_ms = 250.0 + static_cast<double>(mix(i * 8 + static_cast<std::size_t>(r)) % 90000) / 100.0;
      e.recorded_at = recorded_at;
      e.route = route;
      store.put(e);
    }
  }
}

} // namespace

CoreSummary write_core(const fs::path& dir, const CoreOptions& o) {
  if (o.tasks == 0 || o.runs < 1 || o.concurrency < 1 || o.threads < 1)
    throw Error(Exit::bad_input, "gate-bench-gen: --tasks, --runs, --concurrency and --threads must be >= 1");
  if (fs::exists(dir / "gate.yaml") || fs::exists(dir / "cache"))
    throw Error(Exit::bad_input, dir.string() + " already holds generated data; remove it first");

  std::string text;
  text.reserve(o.tasks * 640);
  for (std::size_t i = 0; i < o.tasks; ++i) {
    text += case_line(make_task(i));
    text.push_back('\n');
  }
  const fs::path suite_dir = dir / "suite";
  fs::create_directories(suite_dir / "versions" / "v1");
  write_file_atomically(suite_dir / "versions" / "v1" / "cases.jsonl", text);
  suite::Metadata meta{"bench", "v1", {{"v1", sha256_hex(text), o.tasks}}};
  write_file_atomically(suite_dir / "metadata.json", suite::format_metadata(meta));
  write_file_atomically(dir / "gate.yaml", gate_yaml(o));

  // Read everything back the way `gate run` does.
  config::Config cfg = config::load(dir / "gate.yaml");
  config::resolve_defaults(cfg, gate::Environment{});
  const suite::Suite s = suite::load(cfg.suite, cfg.suite_version);
  if (s.cases.size() != o.tasks)
    throw Error(Exit::bad_input, "the written suite reads back with " + std::to_string(s.cases.size()) +
                                     " cases, expected " + std::to_string(o.tasks));

  cache::Store store(cfg.cache.dir);
  const std::string route = route_text(cfg);
  const std::string recorded_at = utc_now_iso();
  std::mutex failure_mutex;
  std::exception_ptr failure;
  std::vector<std::thread> writers;
  const auto step = static_cast<std::size_t>(o.threads);
  for (std::size_t w = 0; w < step; ++w)
    writers.emplace_back([&, w] {
      try {
        write_entries(s, cfg, store, route, recorded_at, w, step);
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  for (auto& t : writers)
    t.join();
  if (failure) std::rethrow_exception(failure);

  // Every key `gate run` will make must be there: spot-check both ends.
  for (std::size_t i : {std::size_t{0}, s.cases.size() - 1}) {
    const run::PreparedRequest p = run::prepare(s.cases[i], cfg);
    const std::string key = cache::make_key(p.call.provider, p.call.path, p.hashed_body, cfg.runs - 1);
    if (!store.get(key).entry)
      throw Error(Exit::cannot_run, "entry " + key + " of task " + s.cases[i].id + " did not read back");
  }
  // And every entry must verify: stats() counts only valid ones.
  const cache::Stats st = store.stats();
  const std::size_t expected = s.cases.size() * static_cast<std::size_t>(o.runs);
  if (st.entries != expected || st.corrupt != 0)
    throw Error(Exit::cannot_run, "the cache holds " + std::to_string(st.entries) + " valid and " +
                                      std::to_string(st.corrupt) + " bad entries, expected " +
                                      std::to_string(expected) + " valid");
  return {s.cases.size(), st.entries, st.bytes};
}

} // namespace gate::bench
