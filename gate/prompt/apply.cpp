#include <gate/prompt/apply.hpp>

#include <set>

#include <gate/util/error.hpp>
#include <gate/util/input.hpp>
#include <gate/util/json.hpp>
#include <gate/util/sha256.hpp>
#include <gate/util/text.hpp>

namespace gate::prompt {

namespace fs = std::filesystem;

namespace {

// The name a report records for a file: as written relative to gate.yaml,
// so that two checkouts in different directories name it alike.
std::string file_name(const fs::path& file, const config::Config& cfg) {
  const fs::path base = cfg.file.parent_path();
  if (base.empty()) return file.generic_string();
  fs::path rel = file.lexically_relative(base);
  return rel.empty() ? file.generic_string() : rel.generic_string();
}

std::optional<Template> load_role(const config::Config& cfg, const std::string& role,
                                  const std::string& inline_text, const fs::path& file,
                                  std::vector<results::Prompt>& used) {
  const std::string key = "prompt." + role;
  if (!inline_text.empty() && !file.empty()) {
    auto origin = [&](const std::string& k) {
      auto it = cfg.origin.find(k);
      return it == cfg.origin.end() ? k : it->second + " " + k;
    };
    throw_bad_input(origin(key) + " and " + origin(key + "_file") + ": give the " + role +
                    " prompt once, inline or as a file");
  }
  std::string text, name, where;
  if (!file.empty()) {
    text = read_file(file, k_max_template_bytes);
    name = file_name(file, cfg);
    where = file.string();
  } else if (!inline_text.empty()) {
    text = inline_text;
    name = key;
    where = cfg.file.string() + " " + key; // lines count from the value's first line
  } else {
    return std::nullopt;
  }
  if (!valid_utf8(text) || text.find('\0') != std::string::npos)
    throw_bad_input(where + ": a prompt template must be UTF-8 text without NUL bytes");
  used.push_back({role, name, sha256_hex(text)});
  return parse(text, where);
}

bool has_own_system(const suite::Case& c) {
  if (!c.system.empty()) return true;
  for (const auto& m : c.input)
    if (m.role == "system") return true;
  return false;
}

} // namespace

Prompts load(const config::Config& cfg) {
  Prompts p;
  p.system = load_role(cfg, "system", cfg.prompt.system, cfg.prompt.system_file, p.used);
  p.user = load_role(cfg, "user", cfg.prompt.user, cfg.prompt.user_file, p.used);
  return p;
}

void apply(suite::Suite& s, const Prompts& p) {
  const std::string cases_file = (s.dir / "versions" / s.version / "cases.jsonl").string();
  for (suite::Case& c : s.cases) {
    if (c.kind == suite::Kind::agent) continue;
    const std::string label =
        "case " + quote_excerpt(c.id) + " (" + cases_file + ":" + std::to_string(c.line) + ")";
    std::set<std::string> used_names;
    std::vector<std::string> applied;
    auto render_with = [&](const Template& t) {
      for (const auto& slot : t.slots)
        used_names.insert(slot.name);
      applied.push_back(t.where);
      return render(t, c.vars, label);
    };
    if (p.system && !has_own_system(c)) c.system = render_with(*p.system);
    if (c.input.empty()) {
      if (!p.user)
        throw_bad_input(cases_file + ":" + std::to_string(c.line) + ": case " + quote_excerpt(c.id) +
                        " has no \"input\" and gate.yaml sets no prompt.user or prompt.user_file");
      c.input.push_back({"user", render_with(*p.user)});
    }
    for (const auto& [name, value] : c.vars) {
      if (used_names.contains(name)) continue;
      std::string by = applied.empty() ? std::string("no template applies to it") : "not used by ";
      for (std::size_t i = 0; i < applied.size(); ++i)
        by += (i ? ", " : "") + applied[i];
      throw_bad_input(cases_file + ":" + std::to_string(c.line) + ": case " + quote_excerpt(c.id) +
                      ": variable " + quote_excerpt(name) + " is unknown: " + by);
    }
  }
}

std::string conversation_text(const suite::Case& c) {
  std::string out;
  auto add = [&](const std::string& role, const std::string& content) {
    if (!out.empty()) out += "\n\n";
    out += role + ": " + content;
  };
  if (!c.system.empty()) add("system", c.system);
  for (const auto& m : c.input)
    add(m.role, m.content);
  return out;
}

} // namespace gate::prompt
