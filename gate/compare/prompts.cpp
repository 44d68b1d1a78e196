#include <gate/compare/detail.hpp>

namespace gate::compare::detail {

namespace {

std::string label(const results::Prompt& p) { return p.name + " (" + p.role + ")"; }

const results::Prompt* find_role(const std::vector<results::Prompt>& ps, const std::string& role) {
  for (const auto& p : ps)
    if (p.role == role) return &p;
  return nullptr;
}

} // namespace

// docs/verdict-schema.md "warnings": a prompt edit is an ordinary change,
// compared task by task; the verdict names the prompt and how many tasks
// it reached. A task "sent another input" when both reports hold its
// rendered input's hash and they differ; a report without those hashes
// (written before gate kept them) falls back to the affected count.
std::vector<std::string> prompt_warnings(const report::Report& baseline, const report::Report& current,
                                         const std::vector<Pair>& pairs, std::int64_t affected) {
  std::vector<std::string> changes;
  for (const char* role : {"system", "user"}) {
    const results::Prompt* b = find_role(baseline.prompts, role);
    const results::Prompt* c = find_role(current.prompts, role);
    if (b == nullptr && c == nullptr) continue;
    if (b == nullptr)
      changes.push_back("prompt added: " + label(*c));
    else if (c == nullptr)
      changes.push_back("prompt removed: " + label(*b));
    else if (b->sha256 == c->sha256)
      continue; // the same text, maybe named from another directory: the same prompt
    else if (b->name != c->name)
      changes.push_back("prompt changed: " + label(*b) + " → " + label(*c));
    else
      changes.push_back("prompt changed: " + label(*c));
  }
  if (changes.empty()) return {};
  std::int64_t known = 0, changed = 0;
  for (const Pair& p : pairs) {
    if (p.base->input_sha256.empty() || p.cur->input_sha256.empty()) continue;
    ++known;
    changed += p.base->input_sha256 != p.cur->input_sha256;
  }
  const std::string scope =
      known == static_cast<std::int64_t>(pairs.size()) && known > 0
          ? std::to_string(changed) + " of " + std::to_string(known) + " paired tasks sent another input"
          : std::to_string(affected) + " affected tasks";
  std::vector<std::string> out;
  for (auto& c : changes)
    out.push_back(c + "; " + scope);
  return out;
}

} // namespace gate::compare::detail
