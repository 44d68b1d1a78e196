#include <iostream>

#include <gate/cache/store.hpp>
#include <gate/cli/common.hpp>
#include <gate/util/error.hpp>
#include <gate/util/terminal.hpp>

namespace gate::cli {

namespace fs = std::filesystem;

int cmd_cache(const Args& args) {
  po::options_description desc("gate cache options");
  desc.add_options()("help,h", "show this help")("action", po::value<std::string>(),
                                                 "stats | verify | prune")(
      "config,c", po::value<std::string>()->default_value("gate.yaml"), "the gate.yaml naming the cache")(
      "dir", po::value<std::string>(),
      "the cache directory (instead of --config)")("temp-age", po::value<int>()->default_value(3600),
                                                   "prune: remove temp files older than this many seconds");
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
    std::cout << "removed " << n << " file(s)\n";
    return 0;
  }
  throw Error(Exit::bad_input,
              "gate cache: unknown action \"" + action + "\"; expected stats, verify or prune");
}

} // namespace gate::cli
