#pragma once

#include <string>

#include <gate/compare/compare.hpp>

namespace gate::render {

// The verdict as JUnit XML for CI test viewers: one <testsuite name="gate
// compare"> with one <testcase> per metric row ("metric: success rate",
// failed when the row failed the gate) and one per task listed in
// verdict.tasks (classname = scenario, failed when the task regressed; the
// other changes are told in <system-out>). Well-formed XML 1.0 whatever the
// input bytes.
std::string verdict_junit(const compare::Verdict& v);

} // namespace gate::render
