#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <gate/report/report.hpp>

namespace gate::merge {

// One partial report, as `gate run --shard i/n` wrote it, with the file it
// came from (for messages).
struct Part {
  std::filesystem::path file;
  report::Report report;
};

struct Options {
  // Accept missing shards: the merged report is then marked incomplete
  // (so it can neither pass `gate check` silently nor become a baseline).
  bool allow_partial = false;
};

struct Merged {
  report::Report report;
  int shard_count = 0;
  std::vector<int> missing; // 1-based shard indexes absent from the parts (only with allow_partial)
};

// The shard a partial report holds, from config.shard {"index","count"};
// throws Error(bad_input) naming `file` when absent or malformed.
struct ShardId {
  int index = 0, count = 0;
};
ShardId shard_of(const report::Report& r, const std::filesystem::path& file);

// The dotted paths of members that differ between two JSON values
// ("model.name", "runs"); empty when equal. Arrays compare whole.
std::vector<std::string> differing_keys(const boost::json::value& a, const boost::json::value& b);

// Combines partial reports into the report one unsharded run would have
// written: tasks of every part sorted by id, config without "shard", the
// earliest start and latest finish, every number recomputed. Refuses with
// Error(bad_input) naming the files: a part that is not a shard, different
// suites, gate versions, routes or configs (apart from "shard"), different
// shard counts, the same shard twice, a task in two parts, and missing
// shards unless `allow_partial`.
Merged merge(std::vector<Part> parts, const Options& o);

} // namespace gate::merge
