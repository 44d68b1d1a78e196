#include <gate/suite/suite.hpp>

#include <algorithm>
#include <array>
#include <exception>
#include <unordered_map>

#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/parallel.hpp>
#include <gate/util/text.hpp>

namespace gate::suite {

namespace {

// A script check, alone, inside a group or a `stdout` check: it grades a model's answer and
// runs from the suite directory, so an agent case cannot hold one.
bool holds_script(const check::Check& c) {
  if (c.type == check::Type::script || (c.inner && holds_script(*c.inner))) return true;
  for (const auto& child : c.children)
    if (holds_script(child)) return true;
  return false;
}

constexpr std::string_view k_bom = "\xEF\xBB\xBF";

constexpr std::array<std::string_view, 13> k_case_keys = {
    "id",   "kind",   "agent",    "scenario", "difficulty", "group",   "input",
    "vars", "system", "expected", "checks",   "tags",       "metadata"};

// Offset of the first byte that does not start a valid UTF-8 sequence (no
// overlongs, no surrogates, <= U+10FFFF), or npos. util's valid_utf8 only
// says yes or no; an error message needs the column.
std::size_t first_invalid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (len == 0 || i + len > s.size() || !valid_utf8(s.substr(i, len))) return i;
    i += len;
  }
  return std::string_view::npos;
}

bool is_blank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

using gate::json::kind_name;

// Validates one case line; `at` is "file:line" for messages.
struct LineParser {
  const boost::json::object& obj;
  const std::string& at;
  const AgentContext& agent_ctx;

  [[noreturn]] void fail(const std::string& what) const { throw_bad_input(at + ": " + what); }

  std::optional<std::string> string_field(std::string_view key, bool non_empty) const {
    const auto* v = obj.if_contains(boost::json::string_view(key.data(), key.size()));
    if (v == nullptr) return std::nullopt;
    const char* want = non_empty ? "a non-empty string" : "a string";
    if (!v->is_string()) fail("\"" + std::string(key) + "\" must be " + want + ", got " + kind_name(*v));
    if (non_empty && v->get_string().empty()) fail("\"" + std::string(key) + "\" must be " + want);
    return std::string(v->get_string());
  }

  std::vector<Message> input() const {
    static constexpr const char* k_shape =
        "a non-empty string or a non-empty array of {\"role\": \"system\"|\"user\"|\"assistant\", "
        "\"content\": string}";
    const auto* v = obj.if_contains("input");
    // A case with vars may leave its input to gate.yaml's prompt.user.
    if (v == nullptr && obj.contains("vars")) return {};
    if (v == nullptr) fail(std::string("missing \"input\" (") + k_shape + ", or \"vars\" for prompt.user)");
    if (v->is_string()) {
      if (v->get_string().empty())
        fail(std::string("\"input\" must be ") + k_shape + ", got an empty string");
      return {Message{"user", std::string(v->get_string())}};
    }
    if (!v->is_array() || v->get_array().empty())
      fail(std::string("\"input\" must be ") + k_shape + ", got " +
           (v->is_array() ? "an empty array" : kind_name(*v)));
    std::vector<Message> out;
    std::size_t i = 0;
    for (const auto& m : v->get_array()) {
      std::string name = "input[" + std::to_string(i++) + "]";
      if (!m.is_object()) fail(name + " must be an object {\"role\", \"content\"}, got " + kind_name(m));
      const auto& mo = m.get_object();
      for (const auto& kv : mo)
        if (kv.key() != "role" && kv.key() != "content")
          fail(name + ": unknown key " + quote_excerpt(kv.key()) + "; allowed keys: role, content");
      const auto* role = mo.if_contains("role");
      const auto* content = mo.if_contains("content");
      if (role == nullptr || !role->is_string() ||
          (role->get_string() != "system" && role->get_string() != "user" &&
           role->get_string() != "assistant"))
        fail(name + ".role must be \"system\", \"user\" or \"assistant\"" +
             (role != nullptr && role->is_string() ? ", got " + quote_excerpt(role->get_string()) : ""));
      if (content == nullptr || !content->is_string())
        fail(name + ".content must be a string" +
             (content == nullptr ? std::string(" (missing)") : ", got " + std::string(kind_name(*content))));
      out.push_back(Message{std::string(role->get_string()), std::string(content->get_string())});
    }
    return out;
  }

  // "vars": an object of strings, keyed by template variable names.
  std::map<std::string, std::string> vars() const {
    const auto* v = obj.if_contains("vars");
    if (v == nullptr) return {};
    if (!v->is_object())
      fail(std::string("\"vars\" must be an object of strings (template variables), got ") + kind_name(*v));
    std::map<std::string, std::string> out;
    for (const auto& kv : v->get_object()) {
      const std::string_view name(kv.key().data(), kv.key().size());
      if (!prompt_name(name))
        fail("vars: " + quote_excerpt(name) +
             " is not a variable name (letters, digits, _; not starting with a digit)");
      if (!kv.value().is_string())
        fail("vars." + std::string(name) + " must be a string, got " + std::string(kind_name(kv.value())));
      out.emplace(std::string(name), std::string(kv.value().get_string()));
    }
    return out;
  }

  // The name rule of prompt::valid_name (gate/prompt/template.hpp); prompt
  // depends on suite, so the rule is restated here rather than included.
  static bool prompt_name(std::string_view s) {
    auto start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
    if (s.empty() || !start(s.front())) return false;
    return std::all_of(s.begin(), s.end(), [&](char c) { return start(c) || (c >= '0' && c <= '9'); });
  }

  std::vector<std::string> tags() const {
    const auto* v = obj.if_contains("tags");
    if (v == nullptr) return {};
    if (!v->is_array()) fail(std::string("\"tags\" must be an array of strings, got ") + kind_name(*v));
    std::vector<std::string> out;
    std::size_t i = 0;
    for (const auto& t : v->get_array()) {
      if (!t.is_string())
        fail("tags[" + std::to_string(i) + "] must be a string, got " + std::string(kind_name(t)));
      out.emplace_back(t.get_string());
      ++i;
    }
    return out;
  }

  std::vector<check::Check> checks(const std::optional<std::string>& expected) const {
    const auto* v = obj.if_contains("checks");
    if (v == nullptr) fail("missing \"checks\" (a non-empty array of checks)");
    if (!v->is_array() || v->get_array().empty())
      fail(std::string("\"checks\" must be a non-empty array of checks, got ") +
           (v->is_array() ? "an empty array" : kind_name(*v)));
    std::vector<check::Check> out;
    for (const auto& spec : v->get_array())
      out.push_back(check::parse(spec, expected, at));
    return out;
  }

  Case parse(std::size_t line) const {
    for (const auto& kv : obj) {
      bool known = false;
      for (auto k : k_case_keys)
        known = known || kv.key() == k;
      if (!known) {
        std::string allowed;
        for (auto k : k_case_keys)
          allowed += (allowed.empty() ? "" : ", ") + std::string(k);
        fail("unknown key " + quote_excerpt(kv.key()) + "; allowed keys: " + allowed);
      }
    }
    Case c;
    c.line = line;
    auto id = string_field("id", true);
    if (!id) fail("missing \"id\" (a non-empty string)");
    c.id = *id;
    c.scenario = string_field("scenario", true).value_or("default");
    c.difficulty = string_field("difficulty", false).value_or("");
    c.group = string_field("group", true).value_or("");
    c.input = input();
    c.vars = vars();
    c.system = string_field("system", false).value_or("");
    if (obj.contains("system"))
      for (const auto& m : c.input)
        if (m.role == "system")
          fail("both \"system\" and a system message in \"input\"; give the system prompt once");
    c.expected = string_field("expected", false);
    c.checks = checks(c.expected);
    c.tags = tags();
    agent(c);
    return c;
  }

  // kind "agent": the command, fixture and timeout, and only checks that
  // make sense for a command run; agent checks need kind "agent".
  void agent(Case& c) const {
    const std::string kind = string_field("kind", true).value_or("plain");
    if (kind != "plain" && kind != "agent")
      fail("\"kind\" must be \"plain\" or \"agent\", got " + quote_excerpt(kind));
    c.kind = kind == "agent" ? Kind::agent : Kind::plain;
    const auto* own = obj.if_contains("agent");
    if (c.kind == Kind::plain) {
      if (own != nullptr) fail("\"agent\" is given but \"kind\" is not \"agent\"");
      for (const auto& chk : c.checks)
        if (check::is_agent_type(chk.type))
          fail("check \"" + check::type_name(chk.type) + "\" needs an agent case (\"kind\": \"agent\")");
      return;
    }
    if (own != nullptr && !own->is_object())
      fail(std::string(
               "\"agent\" must be an object {\"command\", \"fixture\", \"timeout\", \"input\"}, got ") +
           kind_name(*own));
    // Prompt templates render plain cases only: an agent gets its input as is.
    if (obj.contains("vars"))
      fail("\"vars\" is for plain cases (prompt templates); an agent case takes \"input\"");
    if (c.input.size() != 1 || c.input.front().role != "user" || obj.contains("system"))
      fail("an agent case's \"input\" must be a string (given to the command on stdin or in a file)");
    for (const auto& chk : c.checks) {
      if (chk.type == check::Type::llm_judge) fail("check \"llm_judge\" is not available for agent cases");
      if (holds_script(chk)) fail("check \"script\" is not available for agent cases (use \"command\")");
    }
    c.agent = parse_agent(own != nullptr ? &own->get_object() : nullptr, at, agent_ctx);
  }
};

} // namespace

namespace {

// A run of whole lines of the cases file, read on its own thread.
struct Chunk {
  std::string_view text;
  std::size_t first_line = 1;
  std::vector<Case> cases;
  std::vector<std::size_t> lines; // the line of each case
};

// Reads cases until the chunk ends or a line is wrong (which throws, after
// the cases before it were kept).
void parse_chunk(Chunk& ch, const std::string& where, const AgentContext& agent) {
  std::string_view text = ch.text;
  std::size_t line_no = ch.first_line - 1;
  while (!text.empty()) {
    ++line_no;
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);

    // Size first: a 64 MiB line is refused without being scanned.
    if (line.size() > k_max_line_bytes)
      throw_bad_input(located(where, line_no, 0,
                              "line is " + std::to_string(line.size()) + " bytes; the limit is 1 MiB (" +
                                  std::to_string(k_max_line_bytes) + " bytes)"));
    if (std::size_t nul = line.find('\0'); nul != std::string_view::npos)
      throw_bad_input(located(where, line_no, nul + 1, "NUL byte; a cases file is UTF-8 text"));
    if (std::size_t bad = first_invalid_utf8(line); bad != std::string_view::npos)
      throw_bad_input(located(where, line_no, bad + 1, "invalid UTF-8"));
    if (is_blank(line)) continue;

    boost::json::value v = json::parse_strict(line, where, line_no, json::ParseLimits{k_max_depth});
    const std::string at = where + ":" + std::to_string(line_no);
    if (!v.is_object())
      throw_bad_input(at + ": expected a JSON object (one case per line), got " + kind_name(v));
    ch.cases.push_back(LineParser{v.get_object(), at, agent}.parse(line_no));
    ch.lines.push_back(line_no);
  }
}

// Whole lines, in about `parts` equal pieces.
std::vector<Chunk> split_lines(std::string_view text, std::size_t parts) {
  std::vector<Chunk> out;
  std::size_t start = 0, line = 1;
  for (std::size_t p = 1; p <= parts && start < text.size(); ++p) {
    std::size_t end = text.size();
    if (p < parts) {
      std::size_t nl = text.find('\n', std::max(start, text.size() / parts * p));
      if (nl != std::string_view::npos) end = nl + 1;
    }
    out.push_back(Chunk{text.substr(start, end - start), line, {}, {}});
    line += static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(start),
                                                text.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
    start = end;
  }
  return out;
}

} // namespace

std::vector<Case> parse_cases(std::string_view text, const std::string& where, const AgentContext& agent) {
  if (text.starts_with(k_bom)) text.remove_prefix(k_bom.size());
  // A large suite is read on every core: parsing 20,000 cases (and their
  // regexes) is otherwise a serial stretch at the start of every run.
  std::vector<Chunk> chunks = split_lines(text, parts_for(text.size(), 1u << 20));
  std::vector<std::exception_ptr> errors(chunks.size());
  run_parallel(chunks.size(), [&](std::size_t i) {
    try {
      parse_chunk(chunks[i], where, agent);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  });
  // In file order, so that the error reported is the one a line-by-line
  // read meets first: a duplicate id before a broken line, a broken line
  // before anything in a later chunk.
  std::vector<Case> cases;
  std::unordered_map<std::string, std::size_t> id_lines;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    Chunk& ch = chunks[i];
    for (std::size_t j = 0; j < ch.cases.size(); ++j) {
      auto [it, fresh] = id_lines.emplace(ch.cases[j].id, ch.lines[j]);
      if (!fresh)
        throw_bad_input(where + ":" + std::to_string(ch.lines[j]) + ": duplicate id " +
                        quote_excerpt(ch.cases[j].id) + "; first used on line " + std::to_string(it->second));
      cases.push_back(std::move(ch.cases[j]));
    }
    if (errors[i]) std::rethrow_exception(errors[i]);
  }
  if (cases.empty()) throw_bad_input(where + ": no cases (the file is empty or has only blank lines)");
  return cases;
}

} // namespace gate::suite
