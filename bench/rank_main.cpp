// gate-bench-rank: the in-process cost of `gate rank` without the file
// reads: rank::rank over S strategies × T tasks (k runs each) with B
// bootstrap resamples, then the four renderings.
//
//   gate-bench-rank [--strategies 8] [--tasks 10000] [--runs 3] [--bootstrap 1000] [--repeat 3]
//
// The reports are made in memory from a fixed splitmix64 stream: strategy s
// passes a run of task t with probability 1 / (1 + exp(d_t − 0.3·s)), so
// stronger strategies win more games without any strategy being unbeaten.
// Prints wall and CPU seconds of each repetition (CPU, because on a shared
// machine wall time also measures the neighbours) and the peak RSS.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <sys/resource.h>
#include <vector>

#include <gate/rank/rank.hpp>
#include <gate/render/rank_output.hpp>
#include <gate/report/report.hpp>

namespace {

using namespace gate;

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double unit(rank::SplitMix64& r) { return static_cast<double>(r.next() >> 11) / 9007199254740992.0; }

std::vector<report::Report> make_reports(int strategies, int tasks, int runs) {
  rank::SplitMix64 rng{20261129};
  std::vector<double> difficulty(static_cast<std::size_t>(tasks));
  for (auto& d : difficulty)
    d = -2 + 5 * unit(rng);
  std::vector<report::Report> out;
  for (int s = 0; s < strategies; ++s) {
    report::Report r;
    r.suite = {"bench-rank", "v1", "0"};
    for (int t = 0; t < tasks; ++t) {
      results::Task task;
      char id[32];
      std::snprintf(id, sizeof id, "t%06d", t);
      task.id = id;
      task.scenario = "s" + std::to_string(t % 4);
      const double p = 1 / (1 + std::exp(difficulty[static_cast<std::size_t>(t)] - 0.3 * s));
      for (int k = 0; k < runs; ++k) {
        results::Run run;
        run.index = k;
        run.passed = unit(rng) < p;
        run.prompt_tokens = 400 * (s + 1);
        run.completion_tokens = 150 * (s + 1);
        task.runs.push_back(std::move(run));
      }
      r.tasks.push_back(std::move(task));
    }
    report::compute(r, {});
    out.push_back(std::move(r));
  }
  return out;
}

int arg(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == name) return std::atoi(argv[i + 1]);
  return fallback;
}

} // namespace

int main(int argc, char** argv) {
  const int strategies = arg(argc, argv, "--strategies", 8), tasks = arg(argc, argv, "--tasks", 10000);
  const int runs = arg(argc, argv, "--runs", 3), boot = arg(argc, argv, "--bootstrap", 1000);
  const int repeat = arg(argc, argv, "--repeat", 3);
  if (strategies < 2 || tasks < 1 || runs < 1 || boot < 1 || repeat < 1) {
    std::fprintf(stderr, "usage: gate-bench-rank [--strategies S>=2] [--tasks T] [--runs K] [--bootstrap B] "
                         "[--repeat R]\n");
    return 2;
  }
  double w0 = wall_seconds(), c0 = cpu_seconds();
  const auto reports = make_reports(strategies, tasks, runs);
  std::printf("made %d reports of %d tasks x k=%d in memory: wall %.2f s, cpu %.2f s\n", strategies, tasks,
              runs, wall_seconds() - w0, cpu_seconds() - c0);
  std::vector<rank::Strategy> list;
  for (int s = 0; s < strategies; ++s)
    list.push_back(
        {"s" + std::to_string(s), "s" + std::to_string(s) + ".json", &reports[static_cast<std::size_t>(s)]});
  rank::Options o;
  o.anchor = "s0";
  o.bootstrap = boot;
  for (int i = 1; i <= repeat; ++i) {
    w0 = wall_seconds();
    c0 = cpu_seconds();
    const rank::Ranking r = rank::rank(list, o);
    const double wall = wall_seconds() - w0, cpu = cpu_seconds() - c0;
    w0 = wall_seconds();
    const std::size_t bytes = render::rank_markdown(r).size() + render::rank_json(r).size() +
                              render::rank_csv(r).size() + render::rank_svg(r).size();
    const double render_wall = wall_seconds() - w0;
    std::printf(
        "rank %d: %d strategies x %d tasks, %d resamples: wall %.3f s (%s, target < 2 s), cpu %.3f s; "
        "render %.3f s (%zu bytes); %lld games, verdict \"%s\", top Elo %.1f\n",
        i, strategies, tasks, boot, wall, wall < 2 ? "ok" : "MISSED", cpu, render_wall, bytes,
        static_cast<long long>(r.games), r.verdict.c_str(), r.strategies.back().elo);
  }
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  std::printf("peak RSS %.0f MB\n", static_cast<double>(u.ru_maxrss) / 1024.0);
  return 0;
}
