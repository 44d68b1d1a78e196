#pragma once

#include <string>
#include <string_view>

#include <gate/compare/compare.hpp>

namespace gate::render {

inline constexpr std::string_view k_verdict_schema = "gate.verdict/1";

// Every field of the Verdict as JSON (docs/verdict-schema.md): keys in a
// fixed order, one metric, task or scenario per line so that two verdicts
// diff line by line; optional values as null; doubles in shortest
// round-trip form. Strings are redacted and made valid UTF-8.
std::string verdict_json(const compare::Verdict& v);

} // namespace gate::render
