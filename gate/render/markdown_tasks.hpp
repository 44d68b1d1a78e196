#pragma once

#include <string>

#include <gate/render/markdown.hpp>

// The task lists of the Markdown report, apart from markdown.cpp for size.
namespace gate::render {

// "Failing and flaky tasks": every task with a failed run, or whose runs
// all errored, with its failing checks and an answer excerpt.
void failing_tasks(const report::Report& r, const MarkdownOptions& o, std::string& out);

// "Route-polluted tasks": tasks whose runs did not share one route, with
// the values of each differing field.
void polluted_tasks(const report::Report& r, const MarkdownOptions& o, std::string& out);

} // namespace gate::render
