#pragma once

#include <boost/json/value.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gate/report/report.hpp>
#include <gate/results/results.hpp>

// Reading run logs written by another harness (`gate analyze`, docs/analyze.md).
//
// Input grammar, one file (--format jsonl; the harness formats are read in
// tau.cpp, inspect.cpp and promptfoo.cpp and turned into records of this
// grammar):
//   file    = array | jsonl
//   array   = "[" record *("," record) "]"        ; one JSON text
//   jsonl   = *(record? "\n")                      ; one record per line, blank lines skipped
//   record  = JSON object; its fields are found by canonical name, or by the
//             dotted path given for that name with --map (e.g. "meta.model").
namespace gate::ingest {

// Canonical field name → dotted path in the record. Names not in the map are
// read at their own name.
using FieldMap = std::map<std::string, std::string>;

// What a file holds. automatic picks by the file's shape (docs/analyze.md).
enum class Format { automatic, jsonl, tau_bench, tau2, inspect, promptfoo };

// "auto", "jsonl", "tau-bench", "tau2", "inspect", "promptfoo"; anything
// else → Error(bad_input).
Format parse_format(std::string_view name);
const char* format_name(Format f);

struct Options {
  Format format = Format::automatic;
  FieldMap map;
  // A numeric reward passes when it is 1 within 1e-6, or when it is at least
  // this threshold (when given).
  std::optional<double> pass_threshold;
  // Inspect AI logs: the one scorer whose score decides a sample; empty:
  // every scorer's must pass (docs/analyze.md).
  std::string scorer = {};
};

// The canonical field names a record may carry (docs/analyze.md).
const std::vector<std::string>& field_names();

// Parses "--map field=path" specs; an unknown field, an empty path or a
// field mapped twice is Error(bad_input).
FieldMap parse_map(const std::vector<std::string>& specs);

// One record and where it came from: "file:line" for JSONL, "file: record
// [i]" for an array (used as the prefix of every error about it).
struct Located {
  boost::json::value value;
  std::string where;
  // Why a harness's run failed beyond its reward (how it ended, the
  // reward's parts): appended to the failing verdict's detail.
  std::string note = {};
};

// Splits one file's text into records. Malformed JSON → Error(bad_input)
// naming file:line:col.
std::vector<Located> split_records(std::string_view text, const std::string& file);

// One run as read from a record, before records are grouped into tasks.
struct Record {
  std::string task_id;
  std::optional<std::string> run_id; // absent: runs keep the order they were read in
  std::string scenario, difficulty, group;
  results::Run run; // route, tokens, tool calls, outcome; index not yet set
  int retries = 0;  // retries the harness reported for this record
  std::string where;
};

// Reads one record; a missing task_id, a field of the wrong type, a passed
// and reward both missing on a run that did not error → Error(bad_input)
// naming `where`, the field and what was expected.
Record read_record(const Located& in, const Options& o);

// Groups records into tasks sorted by id, runs ordered by run_id (numeric
// ids numerically). Records of one run_id whose earlier ones errored are one
// retried run: its tokens and attempts are the whole chain's, the last
// record gives the outcome, and its route says how many retries it took. A
// run_id that already has a record that did not error → Error(bad_input).
std::vector<results::Task> group_records(std::vector<Record> records);

struct Input {
  std::string file; // shown in messages
  std::string text;
  // τ²-bench's directory format: results.json holds the run's metadata and
  // a simulation_index, and each simulation is its own file in
  // simulations/ beside it (Results.save(format="dir")). The CLI reads them
  // here, sorted by name, for a directory or a results.json given.
  std::vector<Input> simulations = {};
};

// One file's records in the format asked for (or the one its shape shows),
// and that format. A file that is none of them → Error(bad_input) naming
// the file, line:col where the JSON is malformed, and what was expected.
struct FileRecords {
  std::vector<Located> records;
  Format format = Format::jsonl;
};
FileRecords records_of(const Input& in, const Options& o);

struct Analysis {
  report::SuiteInfo suite;
  Options options;
  metrics::Options metrics;
};

// The whole pipeline: the inputs' records → a computed report, the same
// shape as `gate run` writes. No input, or no record → Error(bad_input).
report::Report analyze(const std::vector<Input>& inputs, const Analysis& a);

// True when `text` looks like an API key or token (a known key prefix, or a
// long unbroken run of letters and digits mixing both): such values are never
// kept in a route.
bool looks_like_secret(std::string_view text);

} // namespace gate::ingest
