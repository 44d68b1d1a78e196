#include <gate/check/regex.hpp>

#include <mutex>
#include <unordered_map>

#include <re2/re2.h>

#include <gate/check/regex_translate.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/text.hpp>

namespace gate::check {

namespace {

// RE2's own default, made explicit: it bounds a pattern's compiled program
// and the DFA states it keeps between searches. A search that would need
// more states goes on as an NFA simulation, slower but still linear.
constexpr std::int64_t k_max_mem = 8 << 20;

RE2::Options options() {
  RE2::Options o;
  o.set_encoding(RE2::Options::EncodingUTF8);
  o.set_posix_syntax(false); // the translation uses \A \z \b \d \w and \p
  o.set_case_sensitive(true);
  o.set_dot_nl(false);
  o.set_never_capture(true); // only whether it matches is asked
  o.set_log_errors(false);   // errors become gate::Error, never a line on stderr
  o.set_max_mem(k_max_mem);
  return o;
}

// Equal translations share one RE2 (suites repeat a pattern across many
// cases, and each RE2 holds its own program and DFA states), so it is
// compiled and its states are built once. A pattern no Regex uses any
// longer is dropped from the table as it grows.
std::shared_ptr<const RE2> compile(const std::string& translated) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::weak_ptr<const RE2>> table;
  static std::size_t prune_at = 64;
  std::lock_guard lock(mutex);
  std::weak_ptr<const RE2>& slot = table[translated];
  if (auto shared = slot.lock()) return shared;
  auto re = std::make_shared<const RE2>(translated, options());
  slot = re;
  if (table.size() >= prune_at) {
    std::erase_if(table, [](const auto& entry) { return entry.second.expired(); });
    prune_at = 2 * table.size() + 64;
  }
  return re;
}

} // namespace

Regex::Regex(std::string_view pattern, const std::string& where, bool ignore_case) : pattern_(pattern) {
  std::string shown;
  json::append_quoted(utf8_prefix(pattern, 80), shown);
  if (shown.size() > 0 && pattern.size() > 80) shown.insert(shown.size() - 1, "...");
  const std::string prefix = where + ": regex " + shown + ": ";
  auto re = compile(detail::translate_regex(pattern, ignore_case, prefix));
  if (re->error_code() == RE2::ErrorPatternTooLarge || re->error_code() == RE2::ErrorRepeatSize)
    throw_bad_input(prefix + "pattern too large: nested counts multiply to more than 1000, or the program " +
                    "exceeds " + std::to_string(k_max_mem >> 20) + " MiB (lower the {m,n} counts)");
  if (!re->ok()) throw_bad_input(prefix + "not accepted by RE2: " + re->error());
  re_ = std::move(re);
}

Regex::~Regex() = default;

bool Regex::search(std::string_view text) const {
  // RE2 matches no invalid byte at all; gate's dialect reads each one as a
  // U+FFFD of its own.
  if (valid_utf8(text))
    return re_->Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), RE2::UNANCHORED, nullptr,
                      0);
  const std::string units = to_valid_utf8(text);
  return re_->Match(re2::StringPiece(units), 0, units.size(), RE2::UNANCHORED, nullptr, 0);
}

} // namespace gate::check
