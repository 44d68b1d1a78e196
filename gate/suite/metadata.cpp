#include <gate/suite/suite.hpp>

#include <set>

#include <gate/util/error.hpp>
#include <gate/util/input.hpp>
#include <gate/util/json.hpp>
#include <gate/util/text.hpp>

namespace gate::suite {

namespace {

bool is_hex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// Version names become directory names under versions/, so nothing that
// could climb out of the suite ("..", "/") or hide (".x") is accepted.
bool is_plain_name(std::string_view s) {
  if (s.empty() || s.size() > 64 || s.front() == '.') return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

void only_keys(const boost::json::object& o, std::initializer_list<std::string_view> keys,
               const std::string& at) {
  for (const auto& kv : o) {
    bool known = false;
    std::string allowed;
    for (auto k : keys) {
      known = known || kv.key() == k;
      allowed += (allowed.empty() ? "" : ", ") + std::string(k);
    }
    if (!known)
      throw_bad_input(at + ": unknown key " + quote_excerpt(kv.key()) + "; allowed keys: " + allowed);
  }
}

VersionInfo parse_version(const boost::json::value& v, const std::string& at) {
  const auto& o = json::as_object(v, at);
  only_keys(o, {"version", "sha256", "cases"}, at);
  VersionInfo info;
  info.version = json::get_string(o, "version", at);
  if (!is_plain_name(info.version))
    throw_bad_input(at + ": \"version\" " + quote_excerpt(info.version) +
                    " must be a plain name of letters, digits, '.', '_' or '-' (not starting with '.')");
  info.sha256 = json::get_string(o, "sha256", at);
  if (!is_hex64(info.sha256))
    throw_bad_input(at + ": \"sha256\" must be 64 lowercase hex digits, got " + quote_excerpt(info.sha256));
  std::int64_t n = json::get_int(o, "cases", at);
  if (n < 1) throw_bad_input(at + ": \"cases\" must be a positive integer, got " + std::to_string(n));
  info.cases = static_cast<std::size_t>(n);
  return info;
}

} // namespace

Metadata read_metadata(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "metadata.json";
  const std::string where = path.string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw_bad_input(where + ": not found; " + dir.string() +
                    " is not a suite directory (make one with `gate suite create`)");
  const std::string text = read_file(path);
  const boost::json::value v = json::parse_strict(text, where);
  const auto& o = json::as_object(v, where);
  only_keys(o, {"name", "latest", "versions", "agent"}, where);

  Metadata m;
  m.name = json::get_string(o, "name", where);
  if (m.name.empty()) throw_bad_input(where + ": \"name\" must be a non-empty string");
  m.latest = json::get_string(o, "latest", where);
  const auto* versions = o.if_contains("versions");
  if (versions == nullptr) throw_bad_input(where + ": missing field \"versions\"");
  if (!versions->is_array() || versions->get_array().empty())
    throw_bad_input(where +
                    ": \"versions\" must be a non-empty array of {\"version\", \"sha256\", \"cases\"}");
  std::set<std::string> seen;
  std::size_t i = 0;
  for (const auto& e : versions->get_array()) {
    VersionInfo info = parse_version(e, where + ": versions[" + std::to_string(i++) + "]");
    if (!seen.insert(info.version).second)
      throw_bad_input(where + ": version " + quote_excerpt(info.version) + " is listed twice");
    m.versions.push_back(std::move(info));
  }
  if (const auto* agent = o.if_contains("agent")) {
    if (!agent->is_object())
      throw_bad_input(where +
                      ": \"agent\" must be an object {\"command\", \"fixture\", \"timeout\", \"input\"}");
    check_agent_defaults(agent->get_object(), where + ": \"agent\"");
    m.agent = agent->get_object();
  }
  if (!seen.contains(m.latest))
    throw_bad_input(where + ": \"latest\" is " + quote_excerpt(m.latest) +
                    ", which is not among \"versions\"");
  return m;
}

std::string format_metadata(const Metadata& m) {
  std::string out = "{\n  \"name\": ";
  json::append_quoted(m.name, out);
  out += ",\n  \"latest\": ";
  json::append_quoted(m.latest, out);
  out += ",\n  \"versions\": [\n";
  for (std::size_t i = 0; i < m.versions.size(); ++i) {
    const auto& v = m.versions[i];
    out += "    {\"version\": ";
    json::append_quoted(v.version, out);
    out += ", \"sha256\": ";
    json::append_quoted(v.sha256, out);
    out += ", \"cases\": " + std::to_string(v.cases) + "}";
    out += i + 1 < m.versions.size() ? ",\n" : "\n";
  }
  out += "  ]";
  if (m.agent) {
    out += ",\n  \"agent\": ";
    json::append_canonical(*m.agent, out);
  }
  out += "\n}\n";
  return out;
}

} // namespace gate::suite
