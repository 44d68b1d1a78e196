#pragma once

#include <string>
#include <string_view>

#include <gate/compare/compare.hpp>

namespace gate::render {

// GitHub Actions workflow-command text for the verdict, printed to stdout
// when GITHUB_ACTIONS is set. One `::error title=gate::<message>` line per
// failed metric and per regressed task (at most k_max_task_annotations of
// those, then one line counting the rest), each message built from gate's
// own words with the untrusted parts (task ids, metric names) escaped as
// GitHub requires (escape_command_data), so nothing can end the line and
// start a command of its own. Free text (the headline, warnings, failing
// checks, answer excerpts) is printed only between
// "::stop-commands::<stop_token>" and "::<stop_token>::", one item per
// line, each line starting with "gate: ": while commands are stopped the
// runner ignores them, and no untrusted text can begin a line or contain
// the token. Throws std::invalid_argument unless stop_token is at least 16
// characters of [A-Za-z0-9].
std::string github_annotations(const compare::Verdict& v, const std::string& stop_token);

// 32 lowercase hex characters (128 bits) from std::random_device.
std::string random_stop_token();

// GitHub's escaping of a command's data: % → %25, CR → %0D, LF → %0A.
std::string escape_command_data(std::string_view s);
// Of a command's property value: as data, and also : → %3A, "," → %2C.
std::string escape_command_property(std::string_view s);

// GitHub shows at most 10 error annotations per step and 50 per job; more
// lines would only bury the log. The verdict files list every task.
inline constexpr std::size_t k_max_task_annotations = 50;

} // namespace gate::render
