#pragma once

#include <cstddef>
#include <string>
#include <string_view>

// Making untrusted text (task ids, answers, check details, scenario names)
// inert in the documents gate writes. Every function redacts registered
// secrets first and replaces invalid UTF-8 with U+FFFD, so its output is
// safe to persist and valid UTF-8 whatever the input bytes.
namespace gate::render {

// Redacted, valid UTF-8: the first step of every escaper below, and what
// a document that escapes by other rules starts from.
std::string safe_text(std::string_view text);

// Text for one GitHub-flavoured Markdown table cell (or any inline
// position): nothing can leave the cell or become markup. Markdown
// punctuation (\ ` * _ [ ] # | ~ $ !) is backslash-escaped; & < > become
// entities; line breaks and control characters become spaces; an @ is
// followed by U+2060 WORD JOINER so it never mentions anyone; bidirectional
// overrides become U+FFFD so they cannot reorder the text around them.
std::string md_cell(std::string_view text);

// An inline code span whose backtick fence is longer than any backtick run
// inside, padded with spaces. Line breaks become spaces; `in_table` also
// escapes | (GFM splits table cells before it sees code spans).
std::string md_code_span(std::string_view text, bool in_table = false);

// A fenced code block (ending with a newline) whose ``` fence is longer
// than any backtick run inside, so the text cannot close it.
std::string md_code_block(std::string_view text);

// & < > " ' as entities.
std::string html_escape(std::string_view text);

// For XML 1.0 attribute values and text: & < > " ' as entities, tab, line
// feed and carriage return as character references (an attribute would
// otherwise normalize them to spaces), and every character XML 1.0 does not
// allow (most C0 controls, U+FFFE, U+FFFF) as U+FFFD.
std::string xml_escape(std::string_view text);
// As xml_escape, but keeps tab and line feed literal: readable element
// content.
std::string xml_text(std::string_view text);

// At most `max_bytes` bytes of `text`, cut on a UTF-8 boundary, ending in
// "…" when something was cut.
std::string truncate_utf8(std::string_view text, std::size_t max_bytes);

// What a task asks, from its report "input" ("role: content" blocks, system
// first): from its last "user: " block on, as a short excerpt must not be
// the system prompt every task shares; the whole text when it has none.
// Not escaped: the caller escapes for its form.
std::string_view question_excerpt(std::string_view input);

} // namespace gate::render
