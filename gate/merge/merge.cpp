#include <gate/merge/merge.hpp>

#include <algorithm>
#include <boost/json.hpp>
#include <map>
#include <set>

#include <gate/util/error.hpp>

namespace gate::merge {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const std::string& message) {
  throw Error(Exit::bad_input, "gate merge: " + message);
}

std::string both(const fs::path& a, const fs::path& b) {
  return " (" + a.string() + " and " + b.string() + ")";
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

boost::json::value without_shard(boost::json::value config) {
  if (auto* o = config.if_object()) o->erase("shard");
  return config;
}

void diff_into(const boost::json::value& a, const boost::json::value& b, const std::string& prefix,
               std::vector<std::string>& out) {
  const auto* oa = a.if_object();
  const auto* ob = b.if_object();
  if (oa == nullptr || ob == nullptr) {
    if (a != b) out.push_back(prefix.empty() ? "(the whole value)" : prefix);
    return;
  }
  std::set<std::string> keys;
  for (const auto& kv : *oa)
    keys.insert(std::string(kv.key()));
  for (const auto& kv : *ob)
    keys.insert(std::string(kv.key()));
  for (const auto& k : keys) {
    const std::string path = prefix.empty() ? k : prefix + "." + k;
    const auto* va = oa->if_contains(k);
    const auto* vb = ob->if_contains(k);
    if (va == nullptr || vb == nullptr)
      out.push_back(path);
    else
      diff_into(*va, *vb, path, out);
  }
}

// Every part must describe the same evaluation as the first one.
void check_same_evaluation(const Part& first, const Part& p) {
  const auto &a = first.report, &b = p.report;
  if (a.suite.name != b.suite.name || a.suite.version != b.suite.version || a.suite.sha256 != b.suite.sha256)
    refuse("different suites: " + a.suite.name + " " + a.suite.version + " (sha256 " +
           a.suite.sha256.substr(0, 12) + ") vs " + b.suite.name + " " + b.suite.version + " (sha256 " +
           b.suite.sha256.substr(0, 12) + ")" + both(first.file, p.file));
  if (a.gate_version != b.gate_version)
    refuse("written by different gate versions: " + a.gate_version + " vs " + b.gate_version +
           both(first.file, p.file));
  if (a.schema != b.schema) refuse("different report schemas" + both(first.file, p.file));
  const auto keys = differing_keys(without_shard(a.config), without_shard(b.config));
  if (!keys.empty())
    refuse("different configurations (" + join(keys) + ")" + both(first.file, p.file) +
           "; every shard must run with the same gate.yaml and flags apart from --shard");
  if (a.route != b.route) refuse("different routes" + both(first.file, p.file));
  auto same_prompt = [](const results::Prompt& x, const results::Prompt& y) {
    return x.role == y.role && x.name == y.name && x.sha256 == y.sha256;
  };
  if (!std::equal(a.prompts.begin(), a.prompts.end(), b.prompts.begin(), b.prompts.end(), same_prompt))
    refuse("different prompts" + both(first.file, p.file) +
           "; every shard must run the same prompt templates");
}

} // namespace

ShardId shard_of(const report::Report& r, const fs::path& file) {
  const auto* config = r.config.if_object();
  const auto* shard = config != nullptr ? config->if_contains("shard") : nullptr;
  if (shard == nullptr)
    refuse(file.string() +
           " is not a partial report (its config has no \"shard\"; write partial reports with "
           "`gate run --shard i/n`)");
  const auto* o = shard->if_object();
  const auto* index = o != nullptr ? o->if_contains("index") : nullptr;
  const auto* count = o != nullptr ? o->if_contains("count") : nullptr;
  if (index == nullptr || count == nullptr || !index->is_int64() || !count->is_int64() ||
      count->as_int64() < 1 || count->as_int64() > 1000 || index->as_int64() < 1 ||
      index->as_int64() > count->as_int64())
    refuse(file.string() + ": config.shard: expected {\"index\": i, \"count\": n} with 1 <= i <= n <= 1000");
  return {static_cast<int>(index->as_int64()), static_cast<int>(count->as_int64())};
}

std::vector<std::string> differing_keys(const boost::json::value& a, const boost::json::value& b) {
  std::vector<std::string> out;
  diff_into(a, b, "", out);
  return out;
}

Merged merge(std::vector<Part> parts, const Options& o) {
  if (parts.empty()) refuse("no partial reports given");
  const Part& first = parts.front();
  const ShardId first_id = shard_of(first.report, first.file);

  std::map<int, const Part*> by_index;
  std::map<std::string, const Part*> task_owner;
  for (const Part& p : parts) {
    const ShardId id = shard_of(p.report, p.file);
    if (id.count != first_id.count)
      refuse("different shard counts: " + std::to_string(first_id.count) + " vs " + std::to_string(id.count) +
             both(first.file, p.file));
    check_same_evaluation(first, p);
    if (auto [it, fresh] = by_index.emplace(id.index, &p); !fresh)
      refuse("overlapping shards: shard " + std::to_string(id.index) + "/" + std::to_string(id.count) +
             " given twice" + both(it->second->file, p.file));
    for (const auto& t : p.report.tasks)
      if (auto [it, fresh] = task_owner.emplace(t.id, &p); !fresh)
        refuse("overlapping shards: task \"" + t.id + "\" is in two reports" +
               both(it->second->file, p.file));
  }

  Merged out;
  out.shard_count = first_id.count;
  for (int i = 1; i <= first_id.count; ++i)
    if (by_index.count(i) == 0) out.missing.push_back(i);
  std::string missing_text;
  for (int i : out.missing)
    missing_text += (missing_text.empty() ? "" : ", ") + std::to_string(i);
  if (!out.missing.empty() && !o.allow_partial)
    refuse("missing shard(s) " + missing_text + " of " + std::to_string(first_id.count) +
           "; pass every partial report, or --allow-partial for an incomplete merge");

  report::Report& r = out.report;
  r.schema = first.report.schema;
  r.gate_version = first.report.gate_version;
  r.suite = first.report.suite;
  r.config = without_shard(first.report.config);
  r.route = first.report.route;
  r.prompts = first.report.prompts;
  r.started_at = first.report.started_at;
  r.finished_at = first.report.finished_at;
  std::vector<std::string> reasons;
  for (Part& p : parts) {
    // ISO 8601 UTC timestamps of one format order as strings do.
    r.started_at = std::min(r.started_at, p.report.started_at);
    r.finished_at = std::max(r.finished_at, p.report.finished_at);
    if (!p.report.complete) reasons.push_back(p.file.string() + ": " + p.report.incomplete_reason);
    r.not_made += p.report.not_made;
    // A run read from a file leaves its route empty when it is the part's
    // shared one; each part may share another, so every run keeps its own.
    for (auto& t : p.report.tasks)
      for (auto& run : t.runs)
        if (run.route.empty()) run.route = report::route_of(p.report, run);
    std::move(p.report.tasks.begin(), p.report.tasks.end(), std::back_inserter(r.tasks));
  }
  if (!out.missing.empty())
    reasons.push_back("shard(s) " + missing_text + " of " + std::to_string(first_id.count) + " missing");
  r.complete = reasons.empty();
  r.incomplete_reason = join(reasons);
  std::sort(r.tasks.begin(), r.tasks.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  report::compute(r, report::options_from_config(r.config, first.file.string()));
  return out;
}

} // namespace gate::merge
