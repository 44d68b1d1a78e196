#include <gate/report/layout.hpp>
#include <gate/report/report.hpp>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include <gate/util/json.hpp>
#include <gate/util/parallel.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

// Layout of the file (docs/report-schema.md): the header fields and "stats"
// one per line, then "tasks" with one task per line, so that a baseline's
// git diff shows one line per changed task. Keys are written in a fixed
// order by hand rather than through boost::json::serialize, which would
// follow insertion order of a value we would first have to build.
namespace gate::report {

namespace {

// Strings are the only place upstream data (answers, check details, error
// messages) reaches the file, so every one is redacted; contains_secret
// returns at once when no secret is registered, keeping the common path
// free of allocations.
void str(std::string_view s, std::string& out) {
  if (contains_secret(s))
    json::append_quoted(redact(s), out, json::Utf8::repair);
  else
    json::append_quoted(s, out, json::Utf8::repair);
}

void i64(std::int64_t v, std::string& out) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

// The route is a map of strings: written as the stats' maps are.
void route(const results::Route& r, std::string& out) { detail::MapOf<detail::Text>::write(r, out); }

// Config is free-form JSON; written with sorted keys (canonical order) and
// every string, keys included, redacted.
// Free-form JSON (the effective config) in canonical form, redacted as a
// whole: it holds no hashes a secret's tail could collide with.
void value(const boost::json::value& v, std::string& out) { out += redact(json::canonical(v)); }

// `shared` is the route most runs used ("runs_route", else "route"): a run
// that used it does not repeat it, which keeps a third of every run line
// out of the file. An empty route (read from a report) is the shared one.
void run(const results::Run& r, const results::Route& shared, std::string& out) {
  detail::write_fields(r, out, [&](std::string_view, auto key) {
    if (r.route.empty() || r.route == shared) return;
    key();
    route(r.route, out);
  });
  out.push_back('}');
}

// A generous guess of the output size so that the string grows once or
// twice rather than ~20 times for a large suite.
std::size_t estimate(const Report& r) {
  std::size_t n = 4096;
  for (const auto& t : r.tasks) {
    n += 512 + t.id.size() + t.scenario.size() + t.group.size() + t.input.size();
    for (const auto& run : t.runs) {
      // route.size(), not a walk of it: a 100,000-run report's routes are
      // a million scattered map nodes, and this is only a guess.
      n +=
          512 + run.answer.size() + run.error_message.size() + run.fingerprint.size() + 64 * run.route.size();
      for (const auto& c : run.checks)
        n += 48 + c.label.size() + c.detail.size();
      n += run.tool_calls.size() * 96;
    }
  }
  return n;
}

// How many runs of tasks [begin, end) used each route, in the order first
// seen. Runs use one or two routes, so a short list of the distinct ones is
// enough.
using RouteCounts = std::vector<std::pair<const results::Route*, std::size_t>>;

void count_routes(const Report& r, std::size_t begin, std::size_t end, RouteCounts& seen) {
  for (std::size_t i = begin; i < end; ++i)
    for (const auto& run : r.tasks[i].runs) {
      const results::Route& route = route_of(r, run);
      auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return *s.first == route; });
      if (it == seen.end())
        seen.emplace_back(&route, 1);
      else
        ++it->second;
    }
}

// The tasks split into parts of about equal runs, one per thread.
std::vector<std::size_t> task_bounds(const Report& r) {
  std::size_t runs = 0;
  for (const auto& t : r.tasks)
    runs += t.runs.size();
  const std::size_t parts = parts_for(runs, 20000);
  std::vector<std::size_t> bounds = {0};
  std::size_t seen = 0;
  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    seen += r.tasks[i].runs.size();
    if (bounds.size() < parts && seen * parts >= runs * bounds.size()) bounds.push_back(i + 1);
  }
  if (bounds.back() != r.tasks.size()) bounds.push_back(r.tasks.size());
  return bounds;
}

// The route most runs used. It is usually the configured one, but replayed
// runs carry the route they were recorded through (another concurrency, say),
// so it is found rather than assumed.
const results::Route& runs_route(const Report& r, const std::vector<std::size_t>& bounds) {
  std::vector<RouteCounts> parts(bounds.size() - 1);
  run_parallel(parts.size(), [&](std::size_t p) { count_routes(r, bounds[p], bounds[p + 1], parts[p]); });
  // Merged in task order, so "first seen" is what one pass would have seen.
  RouteCounts seen;
  for (const auto& part : parts)
    for (const auto& [route, count] : part) {
      // A named copy: clang 14 (the fuzz build) cannot capture a structured binding.
      const auto* const wanted = route;
      auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return *s.first == *wanted; });
      if (it == seen.end())
        seen.emplace_back(route, count);
      else
        it->second += count;
    }
  if (seen.empty()) return r.route;
  // Ties go to the configured route, then to the first seen: stable output.
  const auto* best = &seen.front();
  for (const auto& s : seen)
    if (s.second > best->second || (s.second == best->second && *s.first == r.route)) best = &s;
  return *best->first;
}

void tasks(const Report& r, std::size_t begin, std::size_t end, const results::Route& shared,
           std::string& out) {
  for (std::size_t i = begin; i < end; ++i) {
    const auto& t = r.tasks[i];
    out += i == 0 ? "\n" : ",\n";
    detail::write_fields(t, out, [&](std::string_view name, auto key) {
      key();
      if (name == "stats") {
        detail::write_object(r.task_stats[i], out);
        return;
      }
      out.push_back('[');
      for (std::size_t j = 0; j < t.runs.size(); ++j) {
        if (j != 0) out.push_back(',');
        run(t.runs[j], shared, out);
      }
      out.push_back(']');
    });
    out.push_back('}');
  }
}

} // namespace

void detail::write_string(std::string_view s, std::string& out) { str(s, out); }
void detail::write_int(std::int64_t v, std::string& out) { i64(v, out); }

std::string to_json(const Report& r) {
  if (r.task_stats.size() != r.tasks.size())
    throw std::logic_error("report::to_json: task_stats is not parallel to tasks; call compute() first");
  // A 100,000-run report is mostly its runs, written in parts on every
  // core and joined: this was the longest serial stretch of a large replay.
  const std::vector<std::size_t> bounds = task_bounds(r);
  const results::Route& shared = runs_route(r, bounds);
  std::string out;
  out.reserve(estimate(r));
  detail::write_fields<detail::Lines>(r, out, [&](std::string_view name, auto key) {
    if (name == "runs_route" && shared == r.route) return;
    key();
    if (name == "schema") {
      str(r.schema, out);
    } else if (name == "config") {
      value(r.config, out);
    } else if (name == "route") {
      route(r.route, out);
    } else if (name == "runs_route") {
      route(shared, out);
    } else if (name == "stats") {
      detail::write_object(r.stats, out);
    } else {
      out.push_back('[');
      std::vector<std::string> parts(bounds.size() - 1);
      const std::size_t share = out.capacity() / std::max<std::size_t>(1, parts.size());
      run_parallel(parts.size(), [&](std::size_t p) {
        if (p != 0) parts[p].reserve(share);
        tasks(r, bounds[p], bounds[p + 1], shared, p == 0 ? out : parts[p]);
      });
      for (std::size_t p = 1; p < parts.size(); ++p)
        out += parts[p];
      out += "\n]";
    }
  });
  out += "\n}\n";
  return out;
}

} // namespace gate::report
