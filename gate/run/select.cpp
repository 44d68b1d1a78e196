#include <gate/run/select.hpp>

#include <algorithm>
#include <string>
#include <utility>

#include <gate/util/sha256.hpp>
#include <gate/util/text.hpp>

namespace gate::run {

int shard_of(std::string_view task_id, int count) {
  // The first 8 bytes of sha256(id): uniform, and stable across platforms
  // and gate versions, unlike std::hash.
  const std::string hex = sha256_hex(task_id);
  const std::uint64_t h = std::stoull(hex.substr(0, 16), nullptr, 16);
  return static_cast<int>(h % static_cast<std::uint64_t>(count)) + 1;
}

std::vector<const suite::Case*> select(const suite::Suite& s, const config::Config& c) {
  std::vector<const suite::Case*> out;
  for (const auto& cs : s.cases) {
    bool keep = c.filter.empty();
    for (const auto& pattern : c.filter)
      keep = keep || glob_match(pattern, cs.id);
    if (keep) out.push_back(&cs);
  }
  if (c.sample && *c.sample < out.size()) {
    // Rank by a hash of (seed, id): the sample of a task does not depend on
    // the suite's order or on which other tasks exist.
    std::vector<std::pair<std::string, const suite::Case*>> ranked;
    for (const auto* cs : out)
      ranked.emplace_back(sha256_hex(std::to_string(c.sample_seed) + '\n' + cs->id), cs);
    std::sort(ranked.begin(), ranked.end());
    ranked.resize(*c.sample);
    out.clear();
    for (const auto& [h, cs] : ranked)
      out.push_back(cs);
    std::sort(out.begin(), out.end(), [&](const auto* a, const auto* b) { return a->line < b->line; });
  }
  if (c.shard && c.shard->count > 1) {
    std::erase_if(out,
                  [&](const suite::Case* cs) { return shard_of(cs->id, c.shard->count) != c.shard->index; });
  }
  return out;
}

} // namespace gate::run
