#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

#include <gate/check/check.hpp>

// Inside gate/check only: the shapes of failure details, shared by the
// evaluators of check_eval.cpp and reply_eval.cpp.
namespace gate::check::detail {

// A short, quoted, printable form of text that may come from the model:
// redacted, cut at 80 bytes, invalid UTF-8 repaired, control bytes escaped.
std::string snippet(std::string_view text);
// `<subject> is "<text>"`, or `<subject> starts with "<text>..."` when cut.
std::string what_came(std::string_view subject, std::string_view text);
std::string show_number(double d);
std::string show_json(const boost::json::value& v); // canonical, redacted, cut
std::string quoted_list(const std::vector<std::string>& values);

// The checks of reply_eval.cpp (groups, similar, refusal and the reply
// types): "" when `c` holds, else why not; `errored` set when it could not
// be evaluated. May throw; evaluate() turns that into an errored result.
std::string extra_failure(const Check& c, const Reply& reply, std::string_view subject, bool& errored);

} // namespace gate::check::detail
