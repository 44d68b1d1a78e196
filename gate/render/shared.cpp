#include <gate/render/shared.hpp>

#include <cmath>
#include <cstdio>

#include <gate/util/format.hpp>

namespace gate::render {

std::string pct(double rate) { return std::isfinite(rate) ? fixed(rate * 100.0, 1) + "%" : "—"; }

std::string p_value(double p, std::string_view lt) {
  if (!std::isfinite(p)) return "—";
  if (p < 0.001) return std::string(lt) + "0.001";
  return fixed(p, 3);
}

std::string usd_text(double usd) {
  if (!std::isfinite(usd)) return "—";
  if (usd >= 1) return "$" + fixed(usd, 2);
  const std::string s = trimmed_fixed(usd, 6);
  return s == "0" && usd > 0 ? "<$0.000001" : "$" + s;
}

std::string plural(std::int64_t n, const char* one, const char* many) {
  return std::to_string(n) + ' ' + (n == 1 ? one : many);
}

std::string confirmation_outcome(const compare::Confirmation& c) {
  using State = compare::Confirmation::State;
  const std::string errored = std::to_string(c.errored) + " fresh " + (c.errored == 1 ? "run" : "runs") +
                              " errored" + (c.error.empty() ? "" : " (" + c.error + ")");
  switch (c.state) {
  case State::confirmed: return c.errored > 0 ? "Confirmed, though " + errored : "Confirmed";
  case State::dismissed: return "Dismissed as noise";
  case State::incomplete: return "Incomplete: " + errored + "; the doubt stands";
  case State::unmeasured: return "Could not measure: " + errored;
  case State::needs_calls: return "Not run: the runs are not recorded";
  }
  return "?";
}

std::string md_row(std::initializer_list<std::string> cells) {
  std::string row = "|";
  for (const auto& c : cells)
    row += ' ' + c + " |";
  return row + '\n';
}

std::string unit_suffix(const std::string& unit) { return unit == "%" ? "%" : " " + unit; }

} // namespace gate::render
