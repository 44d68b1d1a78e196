#pragma once

#include <string>
#include <string_view>

namespace gate {

// What terminal_safe does with a line feed.
enum class Newlines {
  escape, // shown as \n: one line of output whatever the text holds
  keep,   // kept: a document gate rendered itself (Markdown, JSON), whose
          // untrusted parts its renderer already kept on one line
};

// The one way text that came from a suite, a model, a report, a log or a
// cache reaches stdout or stderr. A terminal or an Actions runner acts on
// bytes: ESC starts an escape sequence, a line feed followed by `::` is a
// workflow command. So the text is redacted (util/redact.hpp), then every
// control character is shown instead of sent: \n, \r, \t, and \xHH for the
// other C0 controls and DEL; C1 controls (U+0080–U+009F, CSI among them),
// U+2028/U+2029 and bidirectional overrides as \uHHHH (the JSON escape, so
// a JSON document stays valid JSON with the same strings); invalid UTF-8
// bytes become U+FFFD. Valid UTF-8 text is kept as it is. With
// Newlines::keep a line feed (and a tab) is kept, everything else is as
// above.
std::string terminal_safe(std::string_view text, Newlines newlines = Newlines::escape);

} // namespace gate
