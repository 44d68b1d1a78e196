#include <gate/render/rank_output.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

#include <gate/render/escape.hpp>
#include <gate/render/shared.hpp>
#include <gate/util/format.hpp>

namespace gate::render {

namespace {

using rank::Ranking;
using rank::StrategyResult;

constexpr std::size_t k_name_bytes = 64;
constexpr std::size_t k_rank_id_bytes = 80;
constexpr std::size_t k_chart_label = 24;
constexpr std::size_t k_list_ids = 20; // task ids listed in a note; the JSON has them all

std::string name_cell(const std::string& name) { return md_cell(truncate_utf8(name, k_name_bytes)); }
std::string id_span(const std::string& id) { return md_code_span(truncate_utf8(id, k_rank_id_bytes), true); }
std::string whole(double x) { return fixed(x, 0); }
std::string opt1(const std::optional<double>& x) { return x ? signed_fixed(*x, 1) : "—"; }

// Mermaid labels keep [A-Za-z0-9 ._-] and turn every other character into
// one '_', so a name can neither close the quoted label nor the fence.
std::string mermaid_text(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && out.size() < k_chart_label; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c & 0xc0) == 0x80) continue; // a UTF-8 continuation byte: its lead byte gave the '_'
    const bool keep = std::isalnum(c) != 0 && c < 0x80;
    out += keep || c == ' ' || c == '.' || c == '_' || c == '-' ? static_cast<char>(c) : '_';
  }
  return out.empty() ? "_" : out;
}

void chart(const Ranking& r, std::string& out) {
  double low = rank::k_anchor_elo, high = rank::k_anchor_elo;
  std::string labels, values;
  for (const auto& s : r.strategies) {
    low = std::min({low, s.elo, s.elo_interval.low});
    high = std::max({high, s.elo, s.elo_interval.high});
    labels += (labels.empty() ? "\"" : ", \"") + mermaid_text(s.name) + " " + whole(s.tokens_per_task) + "\"";
    values += (values.empty() ? "" : ", ") + fixed(s.elo, 1);
  }
  out += "```mermaid\nxychart-beta\n  title \"Elo against tokens per task (budget order)\"\n  x-axis [" +
         labels + "]\n  y-axis \"Elo\" " + whole(std::floor(low / 50) * 50) + " --> " +
         whole(std::ceil(high / 50) * 50) + "\n  line [" + values +
         "]\n```\n\nEach label is a strategy and its tokens per task; the 95% intervals "
         "are in the table and the SVG chart.\n\n";
}

std::string move_list(const std::vector<rank::TaskMove>& list) {
  if (list.empty()) return "—";
  std::string text;
  for (const auto& m : list)
    text += (text.empty() ? "" : ", ") + id_span(m.id) + " " + signed_fixed(m.delta_elo, 0) + " (" +
            pct(m.anchor_rate) + " → " + pct(m.rate) + ")";
  return text;
}

void id_note(const std::string& lead, const std::vector<std::string>& ids, const std::string& tail,
             std::string& out) {
  if (ids.empty()) return;
  out += "- " + lead + " (" + std::to_string(ids.size()) + "): ";
  for (std::size_t i = 0; i < ids.size() && i < k_list_ids; ++i)
    out += (i ? ", " : "") + id_span(ids[i]);
  if (ids.size() > k_list_ids)
    out += ", … (" + std::to_string(ids.size() - k_list_ids) + " more in the JSON)";
  out += tail + "\n";
}

std::string name_list(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names)
    text += (text.empty() ? "" : ", ") + std::string("**") + name_cell(n) + "**";
  return text;
}

void notes(const Ranking& r, std::string& out) {
  std::string body;
  if (r.prior) {
    body += "- **Prior added to the cross-task fit:** without it the fit has no finite solution";
    if (!r.unbeaten.empty()) body += " (never lost a game: " + name_list(r.unbeaten) + ")";
    if (!r.winless.empty()) body += " (never won or drew one: " + name_list(r.winless) + ")";
    body += "; one virtual draw between every pair of strategies keeps the Elo finite and pulls it towards "
            "equal.\n";
  }
  body += "- Per-task fits with the prior: " + std::to_string(r.per_task_prior) +
          " (a task's best strategy never loses on it); bootstrap resamples with the prior: " +
          std::to_string(r.bootstrap_prior) + " of " + std::to_string(r.bootstrap) + ".\n";
  id_note("Tasks without the anchor", r.tasks_without_anchor,
          ": played by other strategies (their games count in the Elo column) but not by the anchor, so they "
          "have no per-task Elo",
          body);
  id_note("Tasks with fewer than two scored strategies", r.tasks_without_games, ": no game, left out", body);
  for (const auto& s : r.strategies) {
    if (!s.complete) body += "- The report of **" + name_cell(s.name) + "** is incomplete (interrupted).\n";
    if (s.runs_without_usage > 0)
      body += "- **" + name_cell(s.name) + "**: " + std::to_string(s.runs_without_usage) +
              " runs reported no token usage; its tokens per task is a lower bound.\n";
    if (s.scored_tasks < s.tasks)
      body += "- **" + name_cell(s.name) + "**: every run errored on " +
              std::to_string(s.tasks - s.scored_tasks) +
              (s.tasks - s.scored_tasks == 1 ? " task" : " tasks") + " (no game there).\n";
  }
  if (!r.converged) body += "- Some fit stopped at the iteration limit before the 1e-10 tolerance.\n";
  out += "### Notes\n\n" + body + "\n";
}

} // namespace

std::string rank_markdown(const Ranking& r) {
  std::string out = "## Strategy ranking: " + md_cell(r.suite_name) + " " + md_cell(r.suite_version) + "\n\n";
  out += "Anchor **" + name_cell(r.anchor) + "** (Elo 1000). " + std::to_string(r.tasks) + " tasks, " +
         std::to_string(r.games) + " games; 95% intervals from " + std::to_string(r.bootstrap) +
         " bootstrap resamples of the tasks (seed " + std::to_string(r.seed) +
         "). Budget order: " + (r.order == rank::BudgetOrder::tokens ? "tokens per task" : "as given") +
         ".\n\n";
  out += "**Verdict: " + md_cell(r.verdict) + "** — " + md_cell(r.verdict_reason) + ".\n\n";
  out += "| Strategy | Tokens / task | Success | Elo | 95% interval | ΔElo | ΔElo / 1k tokens | Marginal "
         "ΔElo / 1k "
         "tokens | Won / drawn / lost |\n|---|---:|---:|---:|---|---:|---:|---:|---:|\n";
  for (const auto& s : r.strategies)
    out += md_row({name_cell(s.name) + (s.anchor ? " (anchor)" : ""), whole(s.tokens_per_task),
                   pct(s.success_rate), whole(s.elo),
                   whole(s.elo_interval.low) + " – " + whole(s.elo_interval.high),
                   signed_fixed(s.delta_elo, 0), opt1(s.delta_elo_per_1k), opt1(s.marginal_per_1k),
                   std::to_string(s.won) + " / " + std::to_string(s.drawn) + " / " + std::to_string(s.lost)});
  out += "\n";
  chart(r, out);

  out +=
      "### Per task\n\nOne fit per task, each anchored at " + name_cell(r.anchor) +
      " = 1000: the spread is the standard deviation of a strategy's per-task Elo across the tasks where it "
      "and the anchor both played; the moves are per-task ΔElo (the anchor's pass rate → the strategy's).\n\n"
      "| Strategy | Tasks | Mean per-task Elo | Spread (sd) | Biggest gains | Biggest losses |\n"
      "|---|---:|---:|---:|---|---|\n";
  for (const auto& s : r.strategies) {
    if (s.anchor) continue;
    out += md_row({name_cell(s.name), std::to_string(s.per_task_tasks), whole(s.per_task_mean),
                   whole(s.per_task_sd), move_list(s.gains), move_list(s.losses)});
  }
  out += "\n";
  for (const auto& s : r.strategies) {
    if (!s.only_scenario) continue;
    std::string elsewhere;
    for (const auto& sc : s.scenarios)
      if (sc.scenario != *s.only_scenario)
        elsewhere += (elsewhere.empty() ? "" : ", ") + md_cell(sc.scenario.empty() ? "(none)" : sc.scenario) +
                     " " + signed_fixed(sc.mean_delta_elo, 0);
    for (const auto& sc : s.scenarios)
      if (sc.scenario == *s.only_scenario)
        out += "- **" + name_cell(s.name) + "** helps one task type only: scenario " +
               md_code_span(sc.scenario.empty() ? "(none)" : sc.scenario) + " (" +
               signed_fixed(sc.mean_delta_elo, 0) + " per task; elsewhere " + elsewhere + ").\n";
  }
  notes(r, out);
  out += "Method: per task, each pair of strategies plays one game (the higher pass rate wins, equal rates "
         "draw); Bradley–Terry strengths by Hunter's MM iteration, Elo = 1000 + 400·log10(p / p_anchor). "
         "See docs/rank.md.\n";
  return out;
}

std::string elo_section_markdown(const Ranking& r) {
  if (r.strategies.size() != 2) return "";
  const StrategyResult& base = r.strategies[0].anchor ? r.strategies[0] : r.strategies[1];
  const StrategyResult& cur = r.strategies[0].anchor ? r.strategies[1] : r.strategies[0];
  std::string out = "### Elo (Bradley–Terry over tasks)\n\n";
  out += "**" + name_cell(cur.name) + "** against **" + name_cell(base.name) + "**: **" +
         signed_fixed(cur.delta_elo, 0) + " Elo** (95% interval " +
         signed_fixed(cur.elo_interval.low - 1000, 0) + " to " +
         signed_fixed(cur.elo_interval.high - 1000, 0) + ", " + std::to_string(r.bootstrap) +
         " bootstrap resamples of the tasks, seed " + std::to_string(r.seed) + ") over " +
         std::to_string(r.games) + " paired tasks: " + std::to_string(cur.won) + " won, " +
         std::to_string(cur.drawn) + " drawn, " + std::to_string(cur.lost) + " lost. Tokens per task " +
         whole(base.tokens_per_task) + " → " + whole(cur.tokens_per_task) + ".";
  if (r.prior) out += " One side never lost a game: one virtual draw was added so the Elo stays finite.";
  out += "\n\n";
  return out;
}

} // namespace gate::render
