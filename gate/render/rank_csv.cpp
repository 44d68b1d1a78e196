#include <gate/render/rank_output.hpp>

#include <cmath>
#include <cstdio>

#include <gate/report/report.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::render {

namespace {

// RFC 4180: every text cell quoted, quotes doubled. A cell a spreadsheet
// would run as a formula (= + - @, tab, carriage return first) gets a
// leading apostrophe (OWASP's advice for CSV injection).
std::string text_cell(const std::string& raw) {
  std::string s = to_valid_utf8(redact(raw));
  if (!s.empty() &&
      (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' || s[0] == '\r'))
    s.insert(0, 1, '\'');
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// Fixed decimals, so the file does not change with the last bits of a fit.
std::string num(double x, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  std::string s = buf;
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-') s.erase(0, 1); // no "-0.00"
  return s;
}
std::string num(const std::optional<double>& x, int decimals) { return x ? num(*x, decimals) : ""; }

} // namespace

std::string rank_csv(const rank::Ranking& r) {
  std::string out = "strategy,file,anchor,tasks,tokens_per_task,runs_without_usage,success_rate,elo,elo_low,"
                    "elo_high,delta_elo,delta_elo_per_1k_tokens,step_gain,step_gain_low,step_gain_high,"
                    "marginal_delta_elo_per_1k_tokens,won,drawn,lost,per_task_tasks,per_task_elo_mean,"
                    "per_task_elo_sd,only_scenario\r\n";
  for (const auto& s : r.strategies) {
    std::optional<double> step_low, step_high;
    if (s.step_interval) {
      step_low = s.step_interval->low;
      step_high = s.step_interval->high;
    }
    out += text_cell(s.name) + ',' + text_cell(s.file) + ',' + (s.anchor ? "true" : "false") + ',' +
           std::to_string(s.tasks) + ',' + num(s.tokens_per_task, 1) + ',' +
           std::to_string(s.runs_without_usage) + ',' + num(s.success_rate, 4) + ',' + num(s.elo, 2) + ',' +
           num(s.elo_interval.low, 2) + ',' + num(s.elo_interval.high, 2) + ',' + num(s.delta_elo, 2) + ',' +
           num(s.delta_elo_per_1k, 3) + ',' + num(s.step_gain, 2) + ',' + num(step_low, 2) + ',' +
           num(step_high, 2) + ',' + num(s.marginal_per_1k, 3) + ',' + std::to_string(s.won) + ',' +
           std::to_string(s.drawn) + ',' + std::to_string(s.lost) + ',' + std::to_string(s.per_task_tasks) +
           ',' + num(s.per_task_mean, 2) + ',' + num(s.per_task_sd, 2) + ',' +
           (s.only_scenario ? text_cell(*s.only_scenario) : "") + "\r\n";
  }
  return out;
}

} // namespace gate::render
