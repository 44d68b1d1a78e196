#pragma once

// Internal to gate_ingest: what the readers of the harnesses' own result
// files share (tau.cpp, inspect.cpp, promptfoo.cpp). Each turns one file
// into records of the generic grammar (ingest.hpp), so that read_record
// alone decides outcome, tokens, cost, trajectory and route.

#include <boost/json.hpp>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <gate/ingest/ingest.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>

namespace gate::ingest::detail {

namespace bj = boost::json;

// The value at a path of object keys; nullptr when a step is absent, null
// or not an object.
const bj::value* member(const bj::value* v, std::initializer_list<const char*> path);

// Error(bad_input): "<where>: field "<field>": expected <expected>, got <kind>"
// (or "none found").
[[noreturn]] void bad(const std::string& where, const std::string& field, const std::string& expected,
                      const bj::value* got);

// Error(bad_input): "<file>: expected <what>, got <the value's kind>" for a
// file --format named that is not that harness's.
[[noreturn]] void not_the_format(const std::string& file, const std::string& what, const bj::value& got);

double required_number(const bj::value* v, const std::string& where, const std::string& field,
                       const std::string& expected);

// A whole number >= 0 (token counts), else bad().
std::int64_t whole(const bj::value* v, const std::string& where, const std::string& field);

inline void copy_if(bj::object& to, const char* key, const bj::value* v) {
  if (v) to[key] = *v;
}

// A number in gate's shortest form ("0.5", "1").
std::string number_text(double d);

// Appends a part to a failing run's note, "; "-separated.
void add(std::string& note, const std::string& part);

// Reads every element of a harness's list, named "<prefix>i]" in errors;
// `read(element, where)` gives its record and the note for a failing run.
template <class Read>
std::vector<Located> each_object(const bj::array& items, const std::string& prefix, const char* what,
                                 Read read) {
  std::vector<Located> out;
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string where = prefix + std::to_string(i) + "]";
    if (!items[i].is_object())
      throw Error(Exit::bad_input,
                  where + ": expected " + what + " (a JSON object), got " + json::kind_name(items[i]));
    auto [rec, note] = read(items[i], where);
    out.push_back({std::move(rec), std::move(where), std::move(note)});
  }
  return out;
}

// τ-bench (tau.cpp): a JSON array whose first element has task_id, trial and traj.
bool is_tau_bench(const bj::value& v);
std::vector<Located> tau_bench_records(const bj::value& v, const std::string& file);
// τ²-bench (tau.cpp): an object with info and a simulations list, or (the
// directory format's results.json) a simulation_index whose simulations are
// in.simulations.
bool is_tau2(const bj::value& v);
std::vector<Located> tau2_records(const bj::value& v, const Input& in);
// Inspect AI (inspect.cpp): an object with version, eval {task, model} and status.
bool is_inspect(const bj::value& v);
std::vector<Located> inspect_records(const bj::value& v, const std::string& file, const Options& o);
// promptfoo (promptfoo.cpp): an object whose results hold a results list and stats.
bool is_promptfoo(const bj::value& v);
std::vector<Located> promptfoo_records(const bj::value& v, const std::string& file);

} // namespace gate::ingest::detail
