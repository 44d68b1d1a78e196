#include <gate/suite/suite.hpp>

#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/text.hpp>

namespace gate::suite {

namespace {

using gate::json::kind_name;

constexpr std::string_view k_keys[] = {"command", "fixture", "timeout", "input"};

// A relative path that cannot climb out of the directory it is taken in.
bool plain_relative(std::string_view p) {
  if (p.empty() || p.front() == '/' || p.find('\\') != std::string_view::npos ||
      p.find('\0') != std::string_view::npos)
    return false;
  std::size_t start = 0;
  while (start <= p.size()) {
    std::size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    std::string_view part = p.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

// One key's value, with where it came from for messages.
struct Value {
  const boost::json::value* v = nullptr;
  std::string at;
};

void only_agent_keys(const boost::json::object& o, const std::string& at) {
  for (const auto& kv : o) {
    bool known = false;
    for (auto k : k_keys)
      known = known || kv.key() == k;
    if (!known)
      throw_bad_input(at + ": unknown key " + quote_excerpt(kv.key(), 120) +
                      " in \"agent\"; allowed keys: command, fixture, timeout, input");
  }
}

std::vector<std::string> command_of(const Value& x) {
  const char* shape = "a non-empty array of strings (argv; no shell)";
  if (!x.v->is_array() || x.v->get_array().empty())
    throw_bad_input(x.at + ": \"command\" must be " + shape + ", got " +
                    (x.v->is_array() ? std::string("an empty array") : kind_name(*x.v)));
  std::vector<std::string> argv;
  for (const auto& e : x.v->get_array()) {
    if (!e.is_string() || (argv.empty() && e.get_string().empty()))
      throw_bad_input(x.at + ": \"command[" + std::to_string(argv.size()) + "]\" must be " +
                      (argv.empty() ? "a non-empty string" : "a string") + ", got " +
                      (e.is_string() ? std::string("an empty string") : kind_name(e)));
    argv.emplace_back(e.get_string());
  }
  return argv;
}

double timeout_of(const Value& x) {
  if (!x.v->is_number())
    throw_bad_input(x.at + ": \"timeout\" must be a number of seconds > 0, got " + kind_name(*x.v));
  double t = x.v->to_number<double>();
  if (!(t > 0) || t > 86400)
    throw_bad_input(x.at + ": \"timeout\" must be a number of seconds > 0 (at most 86400)");
  return t;
}

std::string input_of(const Value& x) {
  if (!x.v->is_string())
    throw_bad_input(x.at + ": \"input\" must be \"stdin\" or \"file:NAME\", got " + kind_name(*x.v));
  std::string_view s = x.v->get_string();
  if (s == "stdin") return "";
  if (s.starts_with("file:") && plain_relative(s.substr(5))) return std::string(s.substr(5));
  throw_bad_input(x.at +
                  ": \"input\" must be \"stdin\" or \"file:NAME\" with NAME a relative path inside the "
                  "work copy, got " +
                  quote_excerpt(s, 120));
}

std::string fixture_text(const Value& x) {
  if (!x.v->is_string() || !plain_relative(x.v->get_string()))
    throw_bad_input(
        x.at +
        ": \"fixture\" must be a directory relative to the suite directory (no \"..\", not "
        "absolute), got " +
        (x.v->is_string() ? quote_excerpt(x.v->get_string(), 120) : std::string(kind_name(*x.v))));
  return std::string(x.v->get_string());
}

// The fixture must be a directory that really is inside the suite
// directory: a symlinked fixture pointing elsewhere is refused too.
std::filesystem::path fixture_dir(const Value& x, const std::string& fixture,
                                  const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(dir.empty() ? fs::path(".") : dir, ec);
  const fs::path full = fs::weakly_canonical(base / fixture, ec);
  if (ec || !fs::is_directory(full, ec))
    throw_bad_input(x.at + ": \"fixture\" " + quote_excerpt(fixture, 120) + " is not a directory below " +
                    base.string());
  auto rel = full.lexically_relative(base);
  if (rel.empty() || rel.begin()->string() == "..")
    throw_bad_input(x.at + ": \"fixture\" " + quote_excerpt(fixture, 120) + " resolves to " + full.string() +
                    ", outside the suite directory " + base.string());
  return full;
}

} // namespace

void check_agent_defaults(const boost::json::object& defaults, const std::string& where) {
  only_agent_keys(defaults, where);
  const std::string at = where;
  if (const auto* v = defaults.if_contains("command")) command_of({v, at});
  if (const auto* v = defaults.if_contains("timeout")) timeout_of({v, at});
  if (const auto* v = defaults.if_contains("input")) input_of({v, at});
  if (const auto* v = defaults.if_contains("fixture")) fixture_text({v, at});
}

AgentSpec parse_agent(const boost::json::object* own, const std::string& at, const AgentContext& ctx) {
  if (own != nullptr) only_agent_keys(*own, at);
  auto pick = [&](std::string_view key) -> Value {
    if (own != nullptr)
      if (const auto* v = own->if_contains(key)) return {v, at};
    if (ctx.defaults != nullptr)
      if (const auto* v = ctx.defaults->if_contains(key))
        return {v, ctx.defaults_where + ": \"agent\" (the suite's default, used by " + at + ")"};
    return {};
  };
  auto need = [&](std::string_view key, const char* what) {
    Value x = pick(key);
    if (x.v == nullptr)
      throw_bad_input(at + ": agent case without \"" + std::string(key) + "\" (" + what +
                      ") in its \"agent\" object or the suite's default in metadata.json");
    return x;
  };
  AgentSpec spec;
  spec.command = command_of(need("command", "argv array"));
  Value fx = need("fixture", "a directory relative to the suite directory");
  spec.fixture = fixture_text(fx);
  spec.fixture_dir = fixture_dir(fx, spec.fixture, ctx.dir);
  spec.timeout_s = timeout_of(need("timeout", "seconds > 0"));
  if (Value in = pick("input"); in.v != nullptr) spec.input_file = input_of(in);
  return spec;
}

} // namespace gate::suite
