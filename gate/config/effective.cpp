#include <gate/config/config.hpp>

#include <algorithm>
#include <boost/json/array.hpp>
#include <cstdlib>

#include <gate/config/keys.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>

namespace gate::config {
namespace {

using detail::Row;
using detail::Value;

// Sets `key` from a command-line flag, checked against the key's own row so
// that the file and the flag accept the same values.
void override_key(Config& cfg, const std::string& key, const std::string& flag, const Value& v) {
  const Row* row = detail::find_row(key);
  if (const std::string problem = detail::check(*row, v); !problem.empty()) {
    throw Error(Exit::bad_input, redact(flag + ": " + problem));
  }
  row->set(cfg, v);
  cfg.origin[key] = flag;
}

boost::json::value json_value(const Value& v) {
  if (const bool* b = std::get_if<bool>(&v)) return *b;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (const double* d = std::get_if<double>(&v)) return *d;
  if (const std::string* s = std::get_if<std::string>(&v)) return boost::json::string(redact(*s));
  if (const auto* l = std::get_if<std::vector<std::string>>(&v)) {
    boost::json::array a;
    for (const std::string& s : *l)
      a.emplace_back(redact(s));
    return a;
  }
  return nullptr;
}

} // namespace

void apply(Config& cfg, const Overrides& o) {
  if (o.runs) override_key(cfg, "runs", "--runs", std::int64_t{*o.runs});
  if (o.concurrency) override_key(cfg, "concurrency", "--concurrency", std::int64_t{*o.concurrency});
  if (o.mode) override_key(cfg, "cache.mode", "--mode", *o.mode);
  if (o.baseline) override_key(cfg, "baseline", "--baseline", o.baseline->string());
  if (o.out_dir) override_key(cfg, "outputs.dir", "--out-dir", o.out_dir->string());
  if (!o.filter.empty()) {
    cfg.filter = o.filter;
    cfg.origin["filter"] = "--filter";
  }
  if (o.sample) {
    if (*o.sample < 1)
      throw Error(Exit::bad_input, "--sample: expected an integer >= 1, got " + std::to_string(*o.sample));
    cfg.sample = static_cast<std::size_t>(*o.sample);
    cfg.origin["sample"] = "--sample";
  }
  if (o.sample_seed) {
    cfg.sample_seed = *o.sample_seed;
    cfg.origin["sample_seed"] = "--sample-seed";
  }
  if (o.shard) {
    if (o.shard->count < 1 || o.shard->count > 1000 || o.shard->index < 1 || o.shard->index > o.shard->count)
      throw Error(Exit::bad_input, "--shard: expected i/n with 1 <= i <= n <= 1000, got " +
                                       std::to_string(o.shard->index) + "/" + std::to_string(o.shard->count));
    cfg.shard = o.shard;
    cfg.origin["shard"] = "--shard";
  }
}

void resolve_defaults(Config& cfg, const Environment& env) {
  if (cfg.cache.mode_set) return;
  // Only whether the key's variable is set matters; its value is not kept.
  // A server that takes no key (model.api_key_env: null) lacks nothing.
  const bool keyless = cfg.model.api_key_env.empty();
  if (!env.get("CI").empty() && !keyless && env.get(cfg.model.api_key_env).empty()) {
    cfg.cache.mode = CacheMode::replay_only;
    cfg.origin["cache.mode"] = "default (CI set, no $" + cfg.model.api_key_env + ")";
  } else {
    cfg.cache.mode = CacheMode::replay;
    cfg.origin["cache.mode"] = "default";
  }
}

std::string show(const Config& cfg) {
  std::vector<std::pair<std::string, std::string>> lines; // "key: value", origin
  auto origin = [&](const std::string& key) {
    auto it = cfg.origin.find(key);
    return it == cfg.origin.end() ? std::string("default") : it->second;
  };
  for (const Row& row : detail::rows()) {
    lines.emplace_back(row.info.key + ": " + detail::shown(row, row.get(cfg)), origin(row.info.key));
  }
  if (!cfg.filter.empty()) lines.emplace_back("filter: " + detail::render(cfg.filter), origin("filter"));
  if (cfg.sample) {
    lines.emplace_back("sample: " + std::to_string(*cfg.sample), origin("sample"));
    lines.emplace_back("sample_seed: " + std::to_string(cfg.sample_seed), origin("sample_seed"));
  }
  if (cfg.shard)
    lines.emplace_back("shard: " + std::to_string(cfg.shard->index) + "/" + std::to_string(cfg.shard->count),
                       origin("shard"));
  // Align the comments, but let a long value push only its own comment.
  std::size_t width = 0;
  for (const auto& [text, from] : lines)
    width = std::max(width, std::min<std::size_t>(text.size(), 60));
  std::string out;
  for (const auto& [text, from] : lines) {
    out += text;
    out.append(text.size() < width ? width - text.size() : 0, ' ');
    out += "   # " + from + "\n";
  }
  return redact(out);
}

boost::json::object to_json(const Config& cfg) {
  boost::json::object out;
  for (const Row& row : detail::rows()) {
    if (!row.reported) continue;
    const std::string& key = row.info.key;
    const std::size_t dot = key.find('.');
    const Value raw = row.get(cfg);
    boost::json::value v;
    if (row.kind == detail::Kind::object) {
      // Absent when empty: a report without model.extra or pricing keeps the
      // bytes it had.
      const std::string& text = std::get<std::string>(raw);
      if (text.empty()) continue;
      v = json::parse_strict(redact(text), key);
    } else if (key == "model.api_version" && std::get<std::string>(raw).empty()) {
      // Azure's alone: every other provider's report keeps the bytes it had.
      continue;
    } else {
      v = json_value(raw);
    }
    if (dot == std::string::npos) {
      out[key] = std::move(v);
    } else {
      boost::json::value& section = out[key.substr(0, dot)];
      if (!section.is_object()) section = boost::json::object();
      section.as_object()[key.substr(dot + 1)] = std::move(v);
    }
  }
  // The judge that ran: "" stands for the model itself.
  if (cfg.judge.model.empty()) out["judge"].as_object()["model"] = json_value(cfg.model.name);
  // A partial report says which slice it holds; `gate merge` checks it.
  if (cfg.shard) out["shard"] = {{"index", cfg.shard->index}, {"count", cfg.shard->count}};
  return out;
}

std::filesystem::path output_path(const Outputs& o, const std::filesystem::path& name) {
  if (name.empty() || name.is_absolute()) return name;
  return o.dir / name;
}

} // namespace gate::config
