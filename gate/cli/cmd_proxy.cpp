#include <chrono>
#include <iostream>
#include <thread>

#include <gate/cli/common.hpp>
#include <gate/cli/remote_cache.hpp>
#include <gate/cli/signals.hpp>
#include <gate/proxy/server.hpp>
#include <gate/util/error.hpp>
#include <gate/util/terminal.hpp>

namespace gate::cli {

int cmd_proxy(const Args& args) {
  po::options_description desc("gate proxy options");
  desc.add_options()("help,h", "show this help")(
      "config,c", po::value<std::string>()->default_value("gate.yaml"), "the gate.yaml (model, cache)")(
      "port", po::value<int>()->default_value(0), "port on 127.0.0.1 (0 = a free one)")(
      "mode", po::value<std::string>(), "cache mode: replay | replay-only | record | off")(
      "threads", po::value<int>()->default_value(4), "requests handled at once (1..64)")(
      "replay-timing", po::value<std::string>()->default_value("none"),
      "how answers from the cache are timed: none (at once) | recorded (each streamed event when it "
      "came, a plain answer after its recorded latency) | scaled:X (recorded times x X)");
  po::variables_map vm;
  if (!parse_options(args, desc, vm,
                     "gate proxy [--config gate.yaml] [--port N] [--mode MODE] [--replay-timing "
                     "none|recorded|scaled:X]"))
    return 0;
  const int port = vm["port"].as<int>();
  if (port < 0 || port > 65535)
    throw Error(Exit::bad_input, "--port: expected 0..65535, got " + std::to_string(port));
  const int threads = vm["threads"].as<int>();
  if (threads < 1 || threads > 64)
    throw Error(Exit::bad_input, "--threads: expected 1..64, got " + std::to_string(threads));
  const proxy::ReplayTiming timing = proxy::parse_replay_timing(vm["replay-timing"].as<std::string>());
  config::Overrides o;
  if (vm.count("mode")) o.mode = vm["mode"].as<std::string>();
  config::Config cfg = load_config(vm["config"].as<std::string>(), o);

  install_stop_handlers();
  proxy::Server server(cfg, process_env());
  server.pace_replays(timing);
  const std::shared_ptr<cache::Remote> remote = open_remote(cfg.cache, process_env());
  if (remote) {
    // The proxy runs until stopped: the failure is said when it happens.
    remote->on_failure([](const std::string& why) {
      std::cerr << "gate proxy: warning: " << terminal_safe(remote_failure_text(why)) << "\n";
    });
    server.remote(remote);
  }
  server.start(static_cast<unsigned short>(port), threads);
  std::cout << "listening on http://127.0.0.1:" << server.port() << " (cache "
            << config::to_string(cfg.cache.mode) << ", " << terminal_safe(cfg.cache.dir.string())
            << ", replay timing " << proxy::to_string(timing) << ")" << std::endl;
  while (!stop_requested())
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  server.stop();
  if (remote) std::cerr << "gate proxy: " << cache::counts_text(remote->counts()) << "\n";
  return stop_exit_code();
}

} // namespace gate::cli
