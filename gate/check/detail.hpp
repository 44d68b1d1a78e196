#pragma once

#include <boost/json/value.hpp>
#include <functional>
#include <optional>
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
// A score in [0, 1] to three decimals, for details (the comparison is on the exact value).
std::string show_rounded(double d);
std::string show_json(const boost::json::value& v); // canonical, redacted, cut
std::string quoted_list(const std::vector<std::string>& values);
// Text as written, redacted, cut at `limit` bytes, control bytes as \xHH,
// invalid UTF-8 as U+FFFD (not quoted: a pointer, a pattern, a reason).
std::string printable(std::string_view text, std::size_t limit);
std::string show_pattern(std::string_view pattern); // /printable/
std::size_t code_points(std::string_view s);        // an invalid byte counts as one
std::string pointer_token(std::string_view s);      // RFC 6901: ~ as ~0, / as ~1

// Strict JSON of model text, nesting bounded; nullopt when it is not JSON.
std::optional<boost::json::value> parse_json(std::string_view text);
// The JSON objects inside `text` as promptfoo's contains-json finds them
// (json_find.cpp); `stopped` is set when the search hit its work bound.
std::vector<boost::json::value> json_objects_in(std::string_view text, bool& stopped);
// find: "anywhere": "" when `holds` gives "" for one object found in
// `answer`, else the detail (how many objects, the first one's failure).
std::string anywhere_failure(std::string_view answer, std::string_view subject,
                             const std::function<std::string(const boost::json::value&)>& holds);

// The answer's JSON as the json check finds it: the trimmed answer, else
// the body of its first ```json block, else of its first fenced block.
std::optional<boost::json::value> answer_json(std::string_view answer);
// The detail when there is none.
std::string not_json(std::string_view answer, std::string_view subject);

// The checks of reply_eval.cpp (groups, similar, refusal and the reply
// types): "" when `c` holds, else why not; `errored` set when it could not
// be evaluated, `reason` to what a script said. May throw; evaluate()
// turns that into an errored result.
std::string extra_failure(const Check& c, const Reply& reply, std::string_view subject, bool& errored,
                          std::string& reason);

} // namespace gate::check::detail
