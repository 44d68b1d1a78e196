#include <gate/importer/detail.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <gate/util/text.hpp>

// How promptfoo turns a config value into the text an assertion compares:
// JavaScript's String(value) of what js-yaml read.

namespace gate::importer::detail {

std::string js_number_string(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "-Infinity" : "Infinity";
  if (v == 0) return "0"; // String(-0) is "0" too
  std::string out = v < 0 ? "-" : "";
  v = std::fabs(v);
  // The shortest digits that read back as v, as ECMAScript's Number::toString
  // asks, and their decimal exponent n: v = 0.d1d2...dk × 10^n.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  const std::size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e))
    if (c != '.') digits.push_back(c);
  while (digits.size() > 1 && digits.back() == '0')
    digits.pop_back();
  const int n = std::atoi(std::string(sci.substr(e + 1)).c_str()) + 1;
  const int k = static_cast<int>(digits.size());
  if (k <= n && n <= 21) return out + digits + std::string(static_cast<std::size_t>(n - k), '0');
  if (0 < n && n <= 21)
    return out + digits.substr(0, static_cast<std::size_t>(n)) + "." +
           digits.substr(static_cast<std::size_t>(n));
  if (-6 < n && n <= 0) return out + "0." + std::string(static_cast<std::size_t>(-n), '0') + digits;
  const int exp = n - 1;
  std::string mant = digits.substr(0, 1) + (k > 1 ? "." + digits.substr(1) : "");
  return out + mant + "e" + (exp < 0 ? "-" : "+") + std::to_string(std::abs(exp));
}

std::optional<std::string> js_scalar_text(const Node& n) {
  if (!n.is_scalar() || n.quoted) return std::nullopt;
  const boost::json::value v = to_json(n);
  if (v.is_bool()) return std::string(v.as_bool() ? "true" : "false");
  if (v.is_int64()) {
    const std::int64_t i = v.as_int64();
    if (i > -(std::int64_t(1) << 53) && i < (std::int64_t(1) << 53)) return std::to_string(i);
    return js_number_string(static_cast<double>(i));
  }
  if (v.is_uint64()) return js_number_string(static_cast<double>(v.as_uint64()));
  if (v.is_double()) return js_number_string(v.as_double());
  return std::nullopt;
}

std::optional<std::vector<std::string>> js_comma_values(std::string_view s, std::string& why) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
  };
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (space(s[i]) || s[i] == ','))
      ++i;
    if (i >= s.size()) break;
    if (s[i] != '"') {
      const std::size_t start = i;
      while (i < s.size() && s[i] != ',')
        ++i;
      out.emplace_back(trim_space(s.substr(start, i - start)));
      continue;
    }
    std::string field;
    bool closed = false;
    for (++i; i < s.size();) {
      if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '"' || s[i + 1] == '\\')) {
        field.push_back(s[i + 1]);
        i += 2;
      } else if (s[i] == '"' && i + 1 < s.size() && s[i + 1] == '"') {
        field.push_back('"');
        i += 2;
      } else if (s[i] == '"') {
        ++i;
        closed = true;
        break;
      } else {
        field.push_back(s[i++]);
      }
    }
    while (i < s.size() && space(s[i]))
      ++i;
    if (!closed || (i < s.size() && s[i] != ',')) {
      why =
          closed
              ? "a quoted value followed by more than a comma, which promptfoo refuses (the assertion fails)"
              : "an unterminated quoted value, which promptfoo refuses (the assertion fails)";
      return std::nullopt;
    }
    out.push_back(std::move(field));
  }
  return out;
}

std::vector<std::string> provider_finish_reasons(const std::string& name, bool anthropic) {
  // promptfoo's normalizeFinishReason: these provider values get another
  // name; any other value keeps its own.
  static const std::vector<std::pair<std::string, std::string>> k_names = {
      {"stop", "stop"},
      {"length", "length"},
      {"content_filter", "content_filter"},
      {"tool_calls", "tool_calls"},
      {"function_call", "tool_calls"},
      {"end_turn", "stop"},
      {"stop_sequence", "stop"},
      {"max_tokens", "length"},
      {"tool_use", "tool_calls"},
      {"refusal", "content_filter"},
      {"pause_turn", "pause_turn"}};
  // The values each provider sends (OpenAI's finish_reason, Anthropic's stop_reason).
  static const std::vector<std::string> k_openai = {"stop", "length", "content_filter", "tool_calls",
                                                    "function_call"};
  static const std::vector<std::string> k_anthropic = {"end_turn", "stop_sequence", "max_tokens",
                                                       "tool_use", "refusal",       "pause_turn"};
  auto normalized = [&](const std::string& raw) {
    for (const auto& [from, to] : k_names)
      if (from == raw) return to;
    return raw;
  };
  std::vector<std::string> candidates = anthropic ? k_anthropic : k_openai;
  const bool named =
      std::any_of(k_names.begin(), k_names.end(), [&](const auto& p) { return p.first == name; });
  if (!named) candidates.push_back(name); // a value promptfoo does not rename is its own name
  std::vector<std::string> out;
  for (const auto& raw : candidates)
    if (normalized(raw) == name) out.push_back(raw);
  return out;
}

} // namespace gate::importer::detail
