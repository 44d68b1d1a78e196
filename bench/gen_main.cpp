// gate-bench-gen: writes benchmark inputs (bench/README.md).
//
//   gate-bench-gen core DIR [--tasks N] [--runs K] [--concurrency C] [--threads T]
//   gate-bench-gen reports DIR [--tasks N] [--runs K]
#include <charconv>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <bench/gen.hpp>
#include <gate/util/error.hpp>

namespace {

constexpr const char* k_usage = "usage: gate-bench-gen core DIR [--tasks N] [--runs K] [--concurrency C] "
                                "[--threads T]\n"
                                "       gate-bench-gen reports DIR [--tasks N] [--runs K]\n";

long long positive(const std::string& flag, const std::string& text) {
  long long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1)
    throw gate::Error(gate::Exit::bad_input, flag + ": expected a positive integer, got \"" + text + "\"");
  return v;
}

int run(const std::vector<std::string>& args) {
  if (args.size() < 2 || (args[0] != "core" && args[0] != "reports")) {
    std::cerr << k_usage;
    return static_cast<int>(gate::Exit::bad_input);
  }
  const bool core = args[0] == "core";
  gate::bench::CoreOptions o;
  if (!core) o.runs = 3;
  for (std::size_t i = 2; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) throw gate::Error(gate::Exit::bad_input, args[i] + ": missing value");
    const std::string& flag = args[i];
    const long long v = positive(flag, args[i + 1]);
    if (flag == "--tasks")
      o.tasks = static_cast<std::size_t>(v);
    else if (flag == "--runs" && v <= 1000)
      o.runs = static_cast<int>(v);
    else if (core && flag == "--concurrency" && v <= 1000)
      o.concurrency = static_cast<int>(v);
    else if (core && flag == "--threads" && v <= 64)
      o.threads = static_cast<int>(v);
    else
      throw gate::Error(gate::Exit::bad_input,
                        "unknown option or value out of range: " + flag + "\n" + k_usage);
  }
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if (core) {
    const auto s = gate::bench::write_core(args[1], o);
    std::printf("core: %zu tasks, %zu cache entries (%.1f MB) in %s, %.1f s\n", s.tasks, s.entries,
                static_cast<double>(s.cache_bytes) / 1e6, args[1].c_str(), seconds());
  } else {
    const auto s = gate::bench::write_reports(args[1], o.tasks, o.runs);
    std::printf("reports: baseline %zu tasks (%.1f MB), current %zu tasks (%.1f MB), k = %d, %zu tasks "
                "with a different pass count, in %s, %.1f s\n",
                s.baseline_tasks, static_cast<double>(s.baseline_bytes) / 1e6, s.current_tasks,
                static_cast<double>(s.current_bytes) / 1e6, o.runs, s.changed_tasks, args[1].c_str(),
                seconds());
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const gate::Error& e) {
    std::cerr << "gate-bench-gen: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::cerr << "gate-bench-gen: " << e.what() << "\n";
    return static_cast<int>(gate::Exit::cannot_run);
  }
}
