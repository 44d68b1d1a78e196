#pragma once

#include <string>

#include <gate/report/report.hpp>

namespace gate::render {

// JUnit XML for CI test viewers: one <testsuite> for the suite, one
// <testcase> per task (classname = scenario, name = task id). A task that
// is not all-pass gets <failure> listing its failing checks per run; a task
// whose runs all errored gets <error type="bucket">. Well-formed XML 1.0
// whatever the input bytes.
std::string report_junit(const report::Report& r);

} // namespace gate::render
