#pragma once

#include <string>

#include <gate/render/markdown.hpp>

namespace gate::render {

// "Consistency": for a report whose runs carry trajectories (tool calls from
// the proxy or from ingested logs), where the runs split in words (the
// most common first-divergence step and what it points at), trajectory
// consistency and similarity, token band outliers, and whether polluted
// tasks are in the consistency gap. Nothing when no run made a tool call.
void consistency_section(const report::Report& r, const MarkdownOptions& o, std::string& out);

} // namespace gate::render
