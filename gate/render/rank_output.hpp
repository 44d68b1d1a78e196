#pragma once

#include <string>

#include <gate/rank/rank.hpp>

// The forms of `gate rank` (docs/rank.md). Each formats what the Ranking
// holds and computes no metric; strategy names, file names and task ids are
// untrusted and escaped for their form (escape.hpp).
namespace gate::render {

// The Markdown page: verdict, the strategy table (tokens per task, success,
// Elo with its interval, ΔElo, ΔElo per 1k tokens, marginal ΔElo per 1k
// tokens), a Mermaid chart of Elo against tokens per task, the per-task
// spread with the largest gains and losses, and the notes (prior, tasks
// without the anchor, incomplete reports, runs without usage).
std::string rank_markdown(const rank::Ranking& r);

// One row per strategy in budget order, RFC 4180 quoting; text cells that a
// spreadsheet would read as a formula get a leading apostrophe.
std::string rank_csv(const rank::Ranking& r);

// The Ranking as a `gate.rank/1` JSON document (docs/rank.md).
std::string rank_json(const rank::Ranking& r);

// A self-contained SVG: Elo (with its 95% interval) against tokens per task,
// one point per strategy, joined in budget order.
std::string rank_svg(const rank::Ranking& r);

// The `gate compare --elo` section: the current report's Elo against the
// baseline's (a two-strategy Ranking anchored at the baseline).
std::string elo_section_markdown(const rank::Ranking& r);

} // namespace gate::render
