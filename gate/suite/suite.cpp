#include <gate/suite/suite.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>

#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/input.hpp>
#include <gate/util/json.hpp>
#include <gate/util/sha256.hpp>
#include <gate/util/text.hpp>

namespace gate::suite {

namespace {

std::filesystem::path cases_path(const std::filesystem::path& dir, const std::string& version) {
  return dir / "versions" / version / "cases.jsonl";
}

const VersionInfo& find_version(const Metadata& m, const std::string& version,
                                const std::filesystem::path& dir) {
  for (const auto& v : m.versions)
    if (v.version == version) return v;
  std::string known;
  for (const auto& v : m.versions)
    known += (known.empty() ? "" : ", ") + v.version;
  throw_bad_input((dir / "metadata.json").string() + ": unknown version " + quote_excerpt(version) +
                  "; known versions: " + known);
}

struct Loaded {
  std::string sha256;
  std::vector<Case> cases;
};

// The bytes are read once and the hash is of exactly those bytes, checked
// before any parsing: an edited suite is refused as edited, whatever else
// is wrong with it, and no other read can see different content.
Loaded load_version(const std::filesystem::path& dir, const VersionInfo& info, const AgentContext& ctx) {
  const std::filesystem::path path = cases_path(dir, info.version);
  const std::string text = read_file(path);
  Loaded out;
  out.sha256 = sha256_hex(text);
  if (out.sha256 != info.sha256)
    throw_bad_input(path.string() + ": sha256 mismatch: metadata.json pins " + info.sha256 + ", file has " +
                    out.sha256 + "; the suite was edited in place — use `gate suite new-version`");
  out.cases = parse_cases(text, path.string(), ctx);
  if (out.cases.size() != info.cases)
    throw_bad_input(path.string() + ": " + std::to_string(out.cases.size()) +
                    " cases, but metadata.json records " + std::to_string(info.cases));
  return out;
}

// "v" + one more than the highest "v<N>"; other names do not take part.
std::string next_version_name(const Metadata& m, const std::filesystem::path& dir) {
  std::uint64_t highest = 0;
  for (const auto& v : m.versions) {
    std::string_view digits = std::string_view(v.version).substr(1);
    if (v.version.front() != 'v' || digits.empty()) continue;
    std::uint64_t n = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (end != digits.data() + digits.size()) continue;
    if (ec == std::errc::result_out_of_range || n == UINT64_MAX)
      throw_bad_input((dir / "metadata.json").string() + ": cannot number the version after " +
                      quote_excerpt(v.version));
    highest = std::max(highest, n);
  }
  return "v" + std::to_string(highest + 1);
}

// An existing version's file is never an input: editing it in place is
// the very thing the pinned hash exists to catch.
void refuse_own_version_file(const std::filesystem::path& dir, const Metadata& m,
                             const std::filesystem::path& from) {
  for (const auto& v : m.versions) {
    std::error_code ec;
    if (std::filesystem::equivalent(from, cases_path(dir, v.version), ec) && !ec)
      throw_bad_input(from.string() + " is the cases file of version " + v.version +
                      ", which must stay as recorded; edit a copy outside versions/ and pass the copy "
                      "(restore " +
                      v.version + " first if it was already edited)");
  }
}

// A leftover of a crash between this write and the metadata write is not
// listed in metadata.json, so overwriting it loses nothing.
void write_version(const std::filesystem::path& dir, const std::string& version, std::string_view text) {
  const std::filesystem::path path = cases_path(dir, version);
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) throw_cannot_run("cannot create " + path.parent_path().string() + ": " + ec.message());
  write_file_atomically(path, text);
}

AgentContext agent_context(const std::filesystem::path& dir, const Metadata& m) {
  return AgentContext{dir, m.agent ? &*m.agent : nullptr, (dir / "metadata.json").string()};
}

} // namespace

Suite load(const std::filesystem::path& dir, const std::string& version) {
  const Metadata m = read_metadata(dir);
  const VersionInfo& info = find_version(m, version.empty() ? m.latest : version, dir);
  Loaded l = load_version(dir, info, agent_context(dir, m));
  return Suite{dir, m.name, info.version, m.latest, std::move(l.sha256), std::move(l.cases)};
}

std::string new_version(const std::filesystem::path& dir, const std::filesystem::path& from) {
  Metadata m = read_metadata(dir);
  refuse_own_version_file(dir, m, from);
  const std::string text = read_file(from);
  const std::size_t count = parse_cases(text, from.string(), agent_context(dir, m)).size();
  const std::string sha = sha256_hex(text);
  const VersionInfo& latest = find_version(m, m.latest, dir);
  if (sha == latest.sha256)
    throw_bad_input(from.string() + ": no change: it is byte-identical to the latest version " + m.latest +
                    " (sha256 " + sha + ")");
  const std::string name = next_version_name(m, dir);
  write_version(dir, name, text);
  m.versions.push_back(VersionInfo{name, sha, count});
  m.latest = name;
  write_file_atomically(dir / "metadata.json", format_metadata(m));
  return name;
}

void create(const std::filesystem::path& dir, const std::string& name, const std::filesystem::path& from) {
  const std::filesystem::path meta = dir / "metadata.json";
  std::error_code ec;
  if (std::filesystem::exists(meta, ec))
    throw_bad_input(meta.string() + ": already exists; add a version with `gate suite new-version`");
  if (name.empty() || !valid_utf8(name)) throw_bad_input("suite name must be a non-empty UTF-8 string");
  const std::string text = read_file(from);
  const std::size_t count = parse_cases(text, from.string(), AgentContext{dir, nullptr, ""}).size();
  write_version(dir, "v1", text);
  write_file_atomically(meta,
                        format_metadata(Metadata{name, "v1", {VersionInfo{"v1", sha256_hex(text), count}}}));
}

std::vector<std::string> verify(const std::filesystem::path& dir) {
  const Metadata m = read_metadata(dir);
  std::vector<std::string> lines;
  for (const auto& v : m.versions) {
    const std::size_t n = load_version(dir, v, agent_context(dir, m)).cases.size();
    lines.push_back(v.version + "  " + std::to_string(n) + " cases  sha256 ok");
  }
  return lines;
}

} // namespace gate::suite
