// decode()'s fast path (line.hpp). Replay reads every entry it serves, and
// building a JSON tree, re-serializing `request` and `route` and comparing
// the result with the line took about a quarter of a 100,000-run replay.
// A line encode wrote is canonical, so it can be read in one pass that
// accepts only canonical spelling: sorted keys, no whitespace, the escapes
// json::append_quoted writes, numbers as json::append_number or
// std::to_string print them. Whatever that pass does not recognise goes to
// the full parse, so a rule missing here costs speed, never strictness.
#include <gate/cache/line.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include <gate/util/json.hpp>
#include <gate/util/text.hpp>

namespace gate::cache::detail {

namespace {

// Deeper than any request gate writes, and well inside the full parser's
// limit (Boost.JSON's default depth of 32), so both agree on what is valid.
constexpr int k_max_depth = 16;

bool is_lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

int hex_value(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

class Scanner {
public:
  explicit Scanner(std::string_view line) : s_(line) {}

  bool at_end() const { return pos_ == s_.size(); }
  std::size_t pos() const { return pos_; }

  bool lit(std::string_view t) {
    if (s_.compare(pos_, t.size(), t) != 0) return false;
    pos_ += t.size();
    return true;
  }

  // A string as append_quoted writes it; its text goes to `out` when given.
  bool string(std::string* out) {
    if (!lit("\"")) return false;
    const std::size_t start = pos_;
    for (;;) {
      std::size_t run = pos_;
      while (s_.size() - run >= 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, s_.data() + run, 8);
        if (needs_escape(w)) break;
        run += 8;
      }
      while (run < s_.size()) {
        const auto c = static_cast<unsigned char>(s_[run]);
        if (c < 0x20 || c == '"' || c == '\\') break;
        ++run;
      }
      if (out != nullptr) out->append(s_.data() + pos_, run - pos_);
      pos_ = run;
      if (pos_ == s_.size() || static_cast<unsigned char>(s_[pos_]) < 0x20) return false;
      if (s_[pos_] == '"') break;
      char c = 0;
      if (!escape(c)) return false;
      if (out != nullptr) out->push_back(c);
    }
    const bool ok = valid_utf8(s_.substr(start, pos_ - start));
    ++pos_; // the closing quote
    return ok;
  }

  // A key with no escape in it, as its raw text.
  bool plain_key(std::string_view& key) {
    if (!lit("\"")) return false;
    const std::size_t end = s_.find('"', pos_);
    if (end == std::string_view::npos) return false;
    key = s_.substr(pos_, end - pos_);
    for (char ch : key) {
      const auto c = static_cast<unsigned char>(ch);
      if (c < 0x20 || c == '\\') return false;
    }
    if (!valid_utf8(key)) return false;
    pos_ = end + 1;
    return true;
  }

  // Any JSON value in the form json::append_canonical writes.
  bool canonical(int depth) {
    if (pos_ == s_.size()) return false;
    switch (s_[pos_]) {
    case '{': return object(depth);
    case '[': return array(depth);
    case '"': return string(nullptr);
    case 'n': return lit("null");
    case 't': return lit("true");
    case 'f': return lit("false");
    default: return json_number();
    }
  }

  // A number inside `request` or `route`, as append_canonical writes it:
  // std::to_string of an int64 or uint64, else append_number of a double.
  bool json_number() {
    const std::string_view text = number_token();
    const char* first = text.data();
    const char* last = text.data() + text.size();
    if (text.find_first_of(".eE") == std::string_view::npos) {
      std::int64_t i = 0;
      if (auto [end, ec] = std::from_chars(first, last, i); ec == std::errc() && end == last)
        return std::to_string(i) == text;
      std::uint64_t u = 0;
      if (auto [end, ec] = std::from_chars(first, last, u); ec == std::errc() && end == last)
        return std::to_string(u) == text;
      return false;
    }
    double d = 0;
    return exact_double(text, d);
  }

  // One of the entry's own numbers (latency_ms, event_ms), which the full
  // parse reads as a double or an int64 and encode writes with
  // append_number.
  bool double_field(double& value) {
    const std::string_view text = number_token();
    if (text.find_first_of(".eE") != std::string_view::npos) return exact_double(text, value);
    std::int64_t i = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
    if (ec != std::errc() || end != text.data() + text.size()) return false;
    value = static_cast<double>(i);
    std::string spelled;
    json::append_number(value, spelled);
    return spelled == text;
  }

  // An integer as std::to_string writes it.
  bool integer(std::int64_t& value) {
    const std::size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9')
      ++pos_;
    const std::string_view text = s_.substr(start, pos_ - start);
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size() && std::to_string(value) == text;
  }

  bool small_int(int& value) {
    std::int64_t i = 0;
    if (!integer(i) || i < std::numeric_limits<int>::min() || i > std::numeric_limits<int>::max())
      return false;
    value = static_cast<int>(i);
    return true;
  }

private:
  // The characters a number can be made of; what they spell is checked by
  // reading them and comparing with how they would be written.
  std::string_view number_token() {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && ((s_[pos_] >= '0' && s_[pos_] <= '9') || s_[pos_] == '-' || s_[pos_] == '+' ||
                                s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E'))
      ++pos_;
    return s_.substr(start, pos_ - start);
  }

  // A finite double spelled as append_number spells it.
  static bool exact_double(std::string_view text, double& value) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return false;
    std::string spelled;
    json::append_number(value, spelled);
    return spelled == text;
  }

  // After a backslash: the escapes append_quoted writes, nothing else.
  bool escape(char& c) {
    if (s_.size() - pos_ < 2) return false;
    const char e = s_[pos_ + 1];
    pos_ += 2;
    switch (e) {
    case '"': c = '"'; return true;
    case '\\': c = '\\'; return true;
    case 'n': c = '\n'; return true;
    case 'r': c = '\r'; return true;
    case 't': c = '\t'; return true;
    case 'b': c = '\b'; return true;
    case 'f': c = '\f'; return true;
    case 'u': break;
    default: return false;
    }
    if (s_.size() - pos_ < 4 || s_[pos_] != '0' || s_[pos_ + 1] != '0' || !is_lower_hex(s_[pos_ + 2]) ||
        !is_lower_hex(s_[pos_ + 3]))
      return false;
    const int v = hex_value(s_[pos_ + 2]) * 16 + hex_value(s_[pos_ + 3]);
    pos_ += 4;
    // Control characters only, and not those with a short escape.
    if (v >= 0x20 || v == '\n' || v == '\r' || v == '\t' || v == '\b' || v == '\f') return false;
    c = static_cast<char>(v);
    return true;
  }

  bool object(int depth) {
    if (depth > k_max_depth) return false;
    ++pos_;
    if (lit("}")) return true;
    std::string_view previous;
    for (bool first = true;; first = false) {
      std::string_view key;
      if (!plain_key(key) || (!first && !(previous < key)) || !lit(":") || !canonical(depth + 1))
        return false;
      previous = key;
      if (lit("}")) return true;
      if (!lit(",")) return false;
    }
  }

  bool array(int depth) {
    if (depth > k_max_depth) return false;
    ++pos_;
    if (lit("]")) return true;
    for (;;) {
      if (!canonical(depth + 1)) return false;
      if (lit("]")) return true;
      if (!lit(",")) return false;
    }
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

bool headers(Scanner& in, std::vector<std::pair<std::string, std::string>>& out) {
  if (!in.lit("{")) return false;
  if (in.lit("}")) return true;
  for (;;) {
    std::string_view name;
    if (!in.plain_key(name) || !header_allowed(name)) return false;
    for (char c : name)
      if (c >= 'A' && c <= 'Z') return false;
    if (!out.empty() && !(out.back().first < name)) return false;
    std::string value;
    if (!in.lit(":") || !in.string(&value)) return false;
    out.emplace_back(std::string(name), std::move(value));
    if (in.lit("}")) return true;
    if (!in.lit(",")) return false;
  }
}

bool event_times(Scanner& in, std::vector<double>& out) {
  if (!in.lit("[")) return false;
  for (;;) {
    double t = 0;
    if (!in.double_field(t)) return false;
    out.push_back(t);
    if (in.lit("]")) return valid_event_times(out);
    if (!in.lit(",")) return false;
  }
}

// `request` and `route`: null stands for "", anything else is kept as the
// canonical text it already is.
bool json_text(Scanner& in, std::string_view line, std::string& out) {
  if (in.lit("null")) return true;
  const std::size_t start = in.pos();
  if (!in.canonical(1)) return false;
  out.assign(line.substr(start, in.pos() - start));
  return true;
}

bool usage(Scanner& in, std::optional<std::pair<std::int64_t, std::int64_t>>& out) {
  if (in.lit("null")) return true;
  std::int64_t completion = 0, prompt = 0;
  if (!in.lit("{\"completion_tokens\":") || !in.integer(completion) || !in.lit(",\"prompt_tokens\":") ||
      !in.integer(prompt) || !in.lit("}"))
    return false;
  out = std::make_pair(prompt, completion);
  return true;
}

} // namespace

std::optional<Entry> scan_line(std::string_view line, int version, std::string_view expected_key) {
  Scanner in(line);
  Entry e;
  if (!in.lit("{\"body\":") || !in.string(&e.body)) return std::nullopt;
  if (version >= 2) {
    if (!in.lit(",\"event_ms\":") || !event_times(in, e.event_ms)) return std::nullopt;
  }
  if (!in.lit(",\"headers\":") || !headers(in, e.headers)) return std::nullopt;
  if (!in.lit(",\"key\":") || !in.string(&e.key) || e.key.size() != 64) return std::nullopt;
  for (char c : e.key)
    if (!is_lower_hex(c)) return std::nullopt;
  if (!expected_key.empty() && e.key != expected_key) return std::nullopt;
  if (!in.lit(",\"latency_ms\":") || !in.double_field(e.latency_ms)) return std::nullopt;
  if (!in.lit(",\"path\":") || !in.string(&e.path)) return std::nullopt;
  if (!in.lit(",\"provider\":") || !in.string(&e.provider)) return std::nullopt;
  if (!in.lit(",\"recorded_at\":") || !in.string(&e.recorded_at)) return std::nullopt;
  if (!in.lit(",\"replica\":") || !in.small_int(e.replica)) return std::nullopt;
  if (!in.lit(",\"request\":") || !json_text(in, line, e.request)) return std::nullopt;
  if (!in.lit(",\"route\":") || !json_text(in, line, e.route)) return std::nullopt;
  if (!in.lit(",\"status\":") || !in.small_int(e.status)) return std::nullopt;
  if (!in.lit(",\"usage\":") || !usage(in, e.usage)) return std::nullopt;
  if (!in.lit("}") || !in.at_end()) return std::nullopt;
  return e;
}

} // namespace gate::cache::detail
