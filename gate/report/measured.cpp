#include <gate/report/measured.hpp>

#include <algorithm>
#include <map>

#include <gate/util/format.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::report {

namespace {

constexpr std::size_t k_first_error_bytes = 300;

} // namespace

Measured measured(const Report& r) {
  Measured m;
  std::map<std::string, std::int64_t> by;
  for (const results::Task& t : r.tasks)
    for (const results::Run& run : t.runs) {
      ++m.runs;
      if (!run.errored()) continue;
      ++m.errored;
      ++by[run.error];
      if (m.first_error.empty())
        m.first_error =
            std::string(utf8_prefix(redact("task " + t.id + " run " + std::to_string(run.index) + ": " +
                                           (run.error_message.empty() ? run.error : run.error_message)),
                                    k_first_error_bytes));
    }
  m.buckets.assign(by.begin(), by.end());
  std::stable_sort(m.buckets.begin(), m.buckets.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return m;
}

bool can_judge(const Measured& m, double max_errored_pct) {
  if (m.measured() <= 0) return false;
  // errored / runs > pct / 100, in integers where it matters: exactly the
  // limit is still allowed.
  return 100.0 * static_cast<double>(m.errored) <= max_errored_pct * static_cast<double>(m.runs) + 1e-9;
}

std::string errors_text(const Measured& m) {
  std::string s = std::to_string(m.errored) + " of " + std::to_string(m.runs) + " runs errored";
  if (m.buckets.empty()) return s;
  s += " (";
  for (std::size_t i = 0; i < m.buckets.size(); ++i)
    s += (i > 0 ? ", " : "") + m.buckets[i].first + " " + std::to_string(m.buckets[i].second);
  s += ")";
  if (!m.first_error.empty()) s += "; first: " + m.first_error;
  return s;
}

std::string over_limit_text(const Measured& m, const std::string& limit, double max_errored_pct) {
  return errors_text(m) + ", above " + limit + " " + fixed(max_errored_pct, 1) + "%";
}

std::string success_text(const Report& r, const Measured& m) {
  if (m.measured() <= 0) return "n/a (0 of " + std::to_string(m.runs) + " runs measured)";
  return fixed(100 * r.stats.overall.success_rate, 1) + "%";
}

std::string gap_text(const Report& r) {
  return r.stats.consistency_gap_pp ? fixed(*r.stats.consistency_gap_pp, 1) + "pp" : "n/a";
}

} // namespace gate::report
