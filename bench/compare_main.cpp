// gate-bench-compare: the in-process equivalent of
// `gate compare --baseline A --current B --json /dev/null`, stage by stage.
//
//   gate-bench-compare BASELINE CURRENT [--allow-suite-change]
//
// Prints the wall and CPU time of reading each report (as `gate compare`
// without --html reads them: ReadOptions{false}), of compare::compare, and of
// rendering the verdict JSON, the peak RSS, and the verdict's counts (so a
// reader can see the work was done), then report::read in parts.
#include <boost/json/parse.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <gate/compare/compare.hpp>
#include <gate/render/verdict_json.hpp>
#include <gate/report/report.hpp>
#include <gate/util/error.hpp>
#include <gate/util/input.hpp>
#include <gate/util/json.hpp>

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// CPU time of this thread (user + system), in ms: on a shared machine the
// steadier figure, since wall time also counts the neighbours' turns.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Resident now (after the parse's temporaries were freed, as far as malloc
// gave them back), from /proc/self/statm.
double rss_now_mb() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  long pages_total = 0, pages_resident = 0;
  const int got = std::fscanf(f, "%ld %ld", &pages_total, &pages_resident);
  std::fclose(f);
  return got == 2
             ? static_cast<double>(pages_resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1048576.0
             : 0;
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0; // KiB on Linux
}

// report::read of one file in parts, after the figures above (it adds to
// the process's memory, not to their peak): the file read, the strict parse
// alone (duplicate keys, limits), the whole from_json, and report::compute,
// which from_json runs at its end. from_json − strict parse − compute is the
// exact-doubles pass, the patching and the DOM → Report conversion.
void read_breakdown(const char* file) {
  using namespace gate;
  auto t0 = Clock::now();
  const std::string text = read_file(file);
  const double read = ms_since(t0);
  t0 = Clock::now();
  {
    const boost::json::value v = json::parse_strict(text, file, 1, {});
    (void)v;
  }
  const double strict = ms_since(t0);
  t0 = Clock::now();
  {
    const boost::json::value v = boost::json::parse(text);
    (void)v;
  }
  const double plain = ms_since(t0);
  t0 = Clock::now();
  report::Report r = report::from_json(text, file);
  const double from_json = ms_since(t0);
  t0 = Clock::now();
  report::compute(r, report::options_from_config(r.config, file));
  const double compute = ms_since(t0);
  std::printf("report::read of the baseline in parts:\n");
  std::printf("  read_file               %9.1f ms\n", read);
  std::printf("  json::parse_strict      %9.1f ms  (DOM built and freed)\n", strict);
  std::printf("  boost::json::parse      %9.1f ms  (the same without gate's checks, for scale)\n", plain);
  std::printf("  report::from_json       %9.1f ms  (all of the below)\n", from_json);
  std::printf("    of which compute      %9.1f ms  (timed again on its own)\n", compute);
  std::printf("    of which the rest     %9.1f ms  (strict parse, exact doubles, patch, DOM -> Report)\n",
              from_json - compute);
}

int run(int argc, char** argv) {
  using namespace gate;
  const bool allow = argc == 4 && std::string(argv[3]) == "--allow-suite-change";
  if (argc != 3 && !allow) {
    std::cerr << "usage: gate-bench-compare BASELINE CURRENT [--allow-suite-change]\n";
    return static_cast<int>(Exit::bad_input);
  }
  // What `gate compare` reads when it writes no HTML report (cli/verdict_output.hpp).
  const report::ReadOptions summary{false};
  const auto start = Clock::now();
  auto t0 = Clock::now();
  double c0 = thread_cpu_ms();
  const report::Report base = report::read(argv[1], summary);
  const double read_base = ms_since(t0), read_base_cpu = thread_cpu_ms() - c0;
  const double rss_base_peak = peak_rss_mb(), rss_base_now = rss_now_mb();
  t0 = Clock::now();
  c0 = thread_cpu_ms();
  const report::Report cur = report::read(argv[2], summary);
  const double read_cur = ms_since(t0), read_cur_cpu = thread_cpu_ms() - c0;
  const double rss_read = peak_rss_mb();

  compare::Options o;
  o.allow_suite_change = allow;
  t0 = Clock::now();
  c0 = thread_cpu_ms();
  const compare::Verdict v = compare::compare(base, cur, o);
  const double cmp = ms_since(t0), cmp_cpu = thread_cpu_ms() - c0;
  t0 = Clock::now();
  const std::string json = render::verdict_json(v);
  const double render = ms_since(t0);
  const double total = ms_since(start);

  std::printf("read baseline   %9.1f ms  (CPU %.1f ms of this thread; %zu tasks; peak RSS %.0f MB "
              "while reading, %.0f MB after)\n",
              read_base, read_base_cpu, base.tasks.size(), rss_base_peak, rss_base_now);
  std::printf("read current    %9.1f ms  (CPU %.1f ms; %zu tasks)\n", read_cur, read_cur_cpu,
              cur.tasks.size());
  std::printf("compare         %9.1f ms  (CPU %.1f ms)\n", cmp, cmp_cpu);
  std::printf("verdict json    %9.1f ms  (%.1f KB)\n", render, static_cast<double>(json.size()) / 1e3);
  std::printf("total           %9.1f ms  peak RSS %.0f MB (%.0f MB after reading both)\n", total,
              peak_rss_mb(), rss_read);
  std::printf("verdict: %s; paired %lld, flips %lld, regressed %lld, fixed %lld, became flaky %lld, "
              "became stable %lld\n",
              gate::compare::to_string(v.status), static_cast<long long>(v.paired),
              static_cast<long long>(v.flips), static_cast<long long>(v.regressed),
              static_cast<long long>(v.fixed), static_cast<long long>(v.became_flaky),
              static_cast<long long>(v.became_stable));
  read_breakdown(argv[1]);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const gate::Error& e) {
    std::cerr << "gate-bench-compare: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::cerr << "gate-bench-compare: " << e.what() << "\n";
    return static_cast<int>(gate::Exit::cannot_run);
  }
}
