#include <gate/ingest/ingest.hpp>

#include <algorithm>
#include <boost/json.hpp>
#include <map>
#include <set>

#include <gate/metrics/summary.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/time.hpp>
#include <gate/util/version.hpp>

namespace gate::ingest {

namespace {

bool numeric(const std::string& s) {
  return !s.empty() && s.size() <= 18 && s.find_first_not_of("0123456789") == std::string::npos;
}

// Folds the record of a retry into the earlier, errored records of its run:
// the last record gives the outcome, the chain gives tokens and time.
void fold_retry(Record& earlier, Record&& later) {
  if (!earlier.run.errored())
    throw Error(Exit::bad_input, later.where + ": run_id \"" + *later.run_id + "\" of task \"" +
                                     later.task_id + "\" already has a record that did not error (" +
                                     earlier.where +
                                     "); expected one record per run, or error_type on the earlier attempts");
  results::Run& run = later.run;
  run.prompt_tokens += earlier.run.prompt_tokens;
  run.completion_tokens += earlier.run.completion_tokens;
  run.usage_known = run.usage_known && earlier.run.usage_known;
  run.latency_ms += earlier.run.latency_ms;
  // The chain cost what every attempt cost; one attempt without a cost
  // makes the whole unknown.
  if (run.recorded || earlier.run.recorded) {
    const results::RecordedCost before =
        earlier.run.recorded ? *earlier.run.recorded : results::RecordedCost{};
    results::RecordedCost& cost = results::recorded(run);
    metrics::add_cost(cost.agent, before.agent);
    metrics::add_cost(cost.user, before.user);
  }
  later.retries += earlier.retries + 1;
  run.attempts = later.retries + 1;
  run.route["retries"] = std::to_string(later.retries);
  if (later.scenario.empty()) later.scenario = earlier.scenario;
  if (later.difficulty.empty()) later.difficulty = earlier.difficulty;
  if (later.group.empty()) later.group = earlier.group;
  earlier = std::move(later);
}

// Run ids order numerically when all of a task's are numbers, as text
// otherwise; runs without an id keep the order they were read in, last.
void order_runs(std::vector<Record>& runs) {
  bool all_numeric =
      std::all_of(runs.begin(), runs.end(), [](const Record& r) { return !r.run_id || numeric(*r.run_id); });
  std::stable_sort(runs.begin(), runs.end(), [&](const Record& a, const Record& b) {
    if (!a.run_id || !b.run_id) return a.run_id.has_value() && !b.run_id.has_value();
    if (all_numeric) return std::stoll(*a.run_id) < std::stoll(*b.run_id);
    return *a.run_id < *b.run_id;
  });
}

// A run's index is the harness's own trial number when every run of the
// task has one (a whole number up to metrics::k_max_run_index): trial 2 of
// an interrupted task is run 2, not run 1, so a field the harness sets per
// trial (τ²-bench's seed) lines up with the other tasks' trial 2. Otherwise
// the runs are numbered in order.
results::Task make_task(std::vector<Record>&& runs) {
  order_runs(runs);
  const bool by_trial = std::all_of(runs.begin(), runs.end(), [](const Record& r) {
    return r.run_id && numeric(*r.run_id) && std::stoll(*r.run_id) <= metrics::k_max_run_index;
  });
  results::Task t;
  t.id = runs.front().task_id;
  for (auto& r : runs) {
    if (t.scenario.empty()) t.scenario = r.scenario;
    if (t.difficulty.empty()) t.difficulty = r.difficulty;
    if (t.group.empty()) t.group = r.group;
    r.run.index = by_trial ? static_cast<int>(std::stoll(*r.run_id)) : static_cast<int>(t.runs.size());
    t.runs.push_back(std::move(r.run));
  }
  return t;
}

// The route most runs used (ties: the first seen), as the report's route.
results::Route common_route(const std::vector<results::Task>& tasks) {
  std::vector<std::pair<const results::Route*, std::size_t>> seen;
  for (const auto& t : tasks)
    for (const auto& run : t.runs) {
      auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return *s.first == run.route; });
      if (it == seen.end())
        seen.emplace_back(&run.route, 1);
      else
        ++it->second;
    }
  if (seen.empty()) return {};
  auto best = seen.begin();
  for (auto it = seen.begin(); it != seen.end(); ++it)
    if (it->second > best->second) best = it;
  return *best->first;
}

// The route fields these formats set per trial by design: τ²-bench draws
// one seed per trial for the whole run (run.py), the same in every task.
std::set<std::string> route_by_design(const std::vector<Format>& formats) {
  if (std::find(formats.begin(), formats.end(), Format::tau2) != formats.end()) return {"seed"};
  return {};
}

boost::json::value config_of(const std::vector<Input>& inputs, const std::vector<Format>& formats,
                             const Analysis& a) {
  boost::json::array files, read_as;
  for (const auto& in : inputs)
    files.emplace_back(redact(in.file));
  for (Format f : formats)
    read_as.emplace_back(format_name(f));
  boost::json::object map;
  for (const auto& [field, path] : a.options.map)
    map[field] = redact(path);
  boost::json::object c{{"source", "gate analyze"},
                        {"inputs", std::move(files)},
                        {"formats", std::move(read_as)},
                        {"map", std::move(map)},
                        {"token_band_pct", a.metrics.token_band_pct},
                        {"include_polluted", a.metrics.include_polluted}};
  if (a.options.pass_threshold)
    c["pass_threshold"] = *a.options.pass_threshold;
  else
    c["pass_threshold"] = nullptr;
  if (const auto by_design = route_by_design(formats); !by_design.empty()) {
    boost::json::array names;
    for (const auto& n : by_design)
      names.emplace_back(n);
    c["route_by_design"] = std::move(names);
  }
  return c;
}

} // namespace

std::vector<results::Task> group_records(std::vector<Record> records) {
  std::map<std::string, std::vector<Record>> by_task;
  std::map<std::pair<std::string, std::string>, std::size_t> slot; // (task, run_id) → index in its task
  for (auto& rec : records) {
    auto& runs = by_task[rec.task_id];
    if (rec.run_id) {
      auto [it, fresh] = slot.emplace(std::make_pair(rec.task_id, *rec.run_id), runs.size());
      if (!fresh) {
        fold_retry(runs[it->second], std::move(rec));
        continue;
      }
    }
    runs.push_back(std::move(rec));
  }
  std::vector<results::Task> tasks;
  tasks.reserve(by_task.size());
  for (auto& [id, runs] : by_task)
    tasks.push_back(make_task(std::move(runs)));
  return tasks;
}

report::Report analyze(const std::vector<Input>& inputs, const Analysis& a) {
  if (inputs.empty()) throw Error(Exit::bad_input, "gate analyze: no input files");
  const std::string started = utc_now_iso();
  std::vector<Record> records;
  std::vector<Format> formats;
  for (const auto& in : inputs) {
    auto [located, format] = records_of(in, a.options);
    formats.push_back(format);
    if (located.empty())
      throw Error(Exit::bad_input,
                  in.file + ": no records; expected a JSON array of records or one JSON object per line");
    // A harness's records carry gate's own field names; --map is not theirs.
    Options read_options = a.options;
    if (format != Format::jsonl) read_options.map.clear();
    for (const auto& l : located) {
      records.push_back(read_record(l, read_options));
      auto& checks = records.back().run.checks;
      if (!l.note.empty() && !checks.empty() && !checks.back().passed)
        checks.back().detail += "; " + redact(l.note);
    }
  }
  report::Report r;
  r.gate_version = k_version;
  r.suite = a.suite;
  r.config = config_of(inputs, formats, a);
  r.tasks = group_records(std::move(records));
  r.route = common_route(r.tasks);
  r.started_at = started;
  r.finished_at = utc_now_iso();
  metrics::Options o = a.metrics;
  o.routes.by_design = route_by_design(formats);
  report::compute(r, o);
  return r;
}

} // namespace gate::ingest
