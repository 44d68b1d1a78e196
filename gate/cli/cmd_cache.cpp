#include <iostream>

#include <gate/cache/store.hpp>
#include <gate/check/judge.hpp>
#include <gate/cli/common.hpp>
#include <gate/cli/verdict_output.hpp>
#include <gate/compare/confirm.hpp>
#include <gate/prompt/apply.hpp>
#include <gate/run/request.hpp>
#include <gate/run/select.hpp>
#include <gate/suite/suite.hpp>
#include <gate/util/error.hpp>
#include <gate/util/terminal.hpp>

namespace gate::cli {

namespace fs = std::filesystem;

namespace {

// What `cfg` references now: the keys gate run would look up for the
// selected tasks (prompts rendered, run::prepare's requests, replicas
// 0..runs-1) and the fingerprints of the baseline's recorded requests.
struct Referenced {
  std::set<std::string> keys, baseline_fingerprints;
  std::string judge_marker; // the judge's fixed system prompt, as JSON text holds it
};

Referenced referenced_by(const config::Config& cfg) {
  Referenced r;
  const prompt::Prompts prompts = prompt::load(cfg);
  suite::Suite s = suite::load(cfg.suite, cfg.suite_version);
  prompt::apply(s, prompts);
  for (const suite::Case* c : run::select(s, cfg)) {
    if (c->kind == suite::Kind::agent) continue;
    const run::PreparedRequest p = run::prepare(*c, cfg);
    for (int replica = 0; replica < cfg.runs; ++replica)
      r.keys.insert(cache::make_key(p.call.provider, p.call.path, p.hashed_body, replica));
  }
  if (!cfg.baseline.empty() && fs::exists(cfg.baseline))
    for (const auto& t : read_report(cfg.baseline, "baseline").tasks)
      if (std::string fp = compare::request_fingerprint(t); !fp.empty()) r.baseline_fingerprints.insert(fp);
  const std::string system = check::judge_prompt("", {}, "").system;
  r.judge_marker = system.substr(0, system.find('.') + 1);
  return r;
}

bool is_referenced(const Referenced& r, const cache::Entry& e) {
  if (r.keys.count(e.key)) return true;
  if (r.baseline_fingerprints.count(cache::make_fingerprint(e.provider, e.path, e.request))) return true;
  // An agent's calls through the proxy (path /t/<task>/r/<run>/...) are
  // whatever the agent chose to send: they cannot be enumerated without
  // running it, so they are kept. So are the judge's calls, whose request
  // holds the answer being judged (known only by replaying the task).
  if (e.path.rfind("/t/", 0) == 0) return true;
  return e.request.find(r.judge_marker) != std::string::npos;
}

} // namespace

int cmd_cache(const Args& args) {
  po::options_description desc("gate cache options");
  desc.add_options()("help,h", "show this help")("action", po::value<std::string>(),
                                                 "stats | verify | prune")(
      "config,c", po::value<std::string>()->default_value("gate.yaml"), "the gate.yaml naming the cache")(
      "dir", po::value<std::string>(),
      "the cache directory (instead of --config)")("temp-age", po::value<int>()->default_value(3600),
                                                   "prune: remove temp files older than this many seconds")(
      "apply", "prune: remove the stale entries (without it prune only says what it would remove)");
  po::positional_options_description pos;
  pos.add("action", 1);
  po::variables_map vm;
  if (!parse_options(args, desc, vm, "gate cache stats|verify|prune [--config gate.yaml | --dir DIR]", &pos))
    return 0;
  if (!vm.count("action")) throw Error(Exit::bad_input, "usage: gate cache stats|verify|prune");
  const std::string action = vm["action"].as<std::string>();
  fs::path dir = vm.count("dir") ? fs::path(vm["dir"].as<std::string>())
                                 : load_config(vm["config"].as<std::string>(), {}).cache.dir;
  if (!fs::is_directory(dir)) throw Error(Exit::bad_input, "no cache directory " + dir.string());
  cache::Store store(dir);
  if (action == "stats") {
    cache::Stats s = store.stats();
    std::cout << "cache " << terminal_safe(dir.string()) << "\n  entries    " << s.entries
              << "\n  bytes      " << s.bytes << "\n  corrupt    " << s.corrupt << "\n  temp files "
              << s.temp_files << "\n";
    return 0;
  }
  if (action == "verify") {
    std::vector<std::string> bad = store.verify();
    for (const auto& b : bad)
      std::cout << "bad: " << terminal_safe(b) << "\n";
    std::cout << (bad.empty() ? "all entries verify\n" : std::to_string(bad.size()) + " bad entries\n");
    return bad.empty() ? 0 : static_cast<int>(Exit::bad_input);
  }
  if (action == "prune") {
    std::size_t n = store.prune(nullptr, std::chrono::seconds(vm["temp-age"].as<int>()));
    std::cout << "removed " << n << " temp or corrupt file(s)\n";
    if (vm.count("dir")) {
      std::cout << "stale entries: not looked for (--dir names no suite; pass --config)\n";
      return 0;
    }
    const Referenced r = referenced_by(load_config(vm["config"].as<std::string>(), {}));
    const bool apply = vm.count("apply") != 0;
    cache::Store::Stale st =
        store.prune_unreferenced([&](const cache::Entry& e) { return is_referenced(r, e); }, apply);
    std::cout << (apply ? "removed " : "would remove ") << st.entries << " stale entr"
              << (st.entries == 1 ? "y" : "ies") << " (" << st.bytes
              << " bytes) that neither the suite as configured nor the baseline references"
              << (apply || st.entries == 0 ? "\n" : "; run again with --apply to remove them\n");
    return 0;
  }
  throw Error(Exit::bad_input,
              "gate cache: unknown action \"" + action + "\"; expected stats, verify or prune");
}

} // namespace gate::cli
