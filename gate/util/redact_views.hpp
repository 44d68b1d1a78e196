#pragma once

// Internal to redact.cpp: the texts a secret can hide in besides the raw
// bytes, each with the way back to the bytes it came from, so a match found
// in a decoded text is replaced where it was written.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gate::detail {

// [begin, end) in some text.
struct Span {
  std::size_t begin = 0, end = 0;
};

// A text with its JSON escapes (\uXXXX, \/, \\, \" and the letter escapes)
// decoded. Anything that is not a valid escape is kept as written, so any
// text can be unescaped, JSON or not.
struct Unescaped {
  struct Escape {
    std::size_t out_begin, out_end, in_begin, in_end;
  };
  std::string text;
  std::vector<Escape> escapes; // in order; plain bytes between them map one to one

  // The input bytes that produced text[s.begin, s.end): a span that touches
  // an escape takes all of it.
  Span source(Span s) const;
};

Unescaped unescape(std::string_view in);

// True when `in` holds an escape that can change a secret's characters:
// \u, \/ or an escaped backslash (which may start an escape one level down).
bool has_escapes(std::string_view in);

// Reports every span of `raw` that, decoded, belongs to a match. `find`
// gets each derived text and reports its matches in that text's offsets.
using Finder = std::function<void(std::string_view text, const std::function<void(Span)>& hit)>;

// JSON escapes decoded up to three levels deep (a JSON string holding JSON
// holding the key escaped).
void find_unescaped(std::string_view raw, const Finder& find, const std::function<void(Span)>& hit);

// A server-sent-event stream whose data lines are JSON: the string values at
// one JSON path in successive events are joined, as an SDK joins deltas, so
// a secret split across events is found; every piece of it is reported.
void find_across_events(std::string_view raw, const Finder& find, const std::function<void(Span)>& hit);

} // namespace gate::detail
