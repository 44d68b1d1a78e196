#pragma once

#include <boost/json/value.hpp>
#include <string>

#include <gate/config/config.hpp>
#include <gate/report/report.hpp>
#include <gate/run/runner.hpp>
#include <gate/suite/suite.hpp>

namespace gate::run {

// Turns a run's outcome into the report: tasks sorted by id, every number
// computed (METRICS.md).
report::Report assemble(Outcome&& outcome, const suite::Suite& s, const config::Config& c,
                        const std::string& started_at, const std::string& finished_at);

} // namespace gate::run
