#include <gate/rank/rank.hpp>

#include <gate/util/error.hpp>
#include <gate/util/text.hpp>

namespace gate::rank {

namespace {

constexpr std::size_t k_max_name_bytes = 64;

std::string suite_text(const report::Report& r) {
  return r.suite.name + " " + r.suite.version + " (sha256 " + r.suite.sha256.substr(0, 12) + ")";
}

} // namespace

StrategySpec parse_strategy(std::string_view arg) {
  const std::string shown = "\"" + std::string(arg) + "\"";
  const auto colon = arg.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    throw Error(Exit::bad_input, "strategy " + shown + ": expected FILE:NAME, e.g. r3.json:r3");
  StrategySpec s{std::string(arg.substr(0, colon)), std::string(arg.substr(colon + 1))};
  if (s.name.empty() || s.name.find('/') != std::string::npos)
    throw Error(Exit::bad_input, "strategy " + shown + ": expected FILE:NAME with a name after the last ':'");
  if (s.name.size() > k_max_name_bytes || !valid_utf8(s.name))
    throw Error(Exit::bad_input, "strategy " + shown + ": the name must be valid UTF-8 of at most " +
                                     std::to_string(k_max_name_bytes) + " bytes");
  for (unsigned char c : s.name)
    if (c < 0x20 || c == 0x7f)
      throw Error(Exit::bad_input, "strategy " + shown + ": the name must not contain control characters");
  return s;
}

void check_same_suite(const std::vector<Strategy>& strategies) {
  for (std::size_t i = 1; i < strategies.size(); ++i) {
    const auto& a = *strategies.front().report;
    const auto& b = *strategies[i].report;
    if (a.suite.name != b.suite.name || a.suite.version != b.suite.version ||
        a.suite.sha256 != b.suite.sha256)
      throw Error(Exit::bad_input, "reports of different suites: " + strategies.front().file + " is " +
                                       suite_text(a) + ", " + strategies[i].file + " is " + suite_text(b) +
                                       "; rank only reports of one suite");
  }
}

} // namespace gate::rank
