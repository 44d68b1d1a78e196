// Markdown escapers. Properties:
//   md_cell: no line break, no '<', every '|' preceded by a backslash (GFM
//     splits cells before inline parsing and keeps "\|" in the cell), valid
//     UTF-8;
//   md_code_span: one code span: a fence of n backticks, a body without a
//     run of exactly n backticks (which would close it early), the same
//     fence at the end, no line break; in a table also every '|' escaped;
//   md_code_block: opens and closes with the same fence of at least three
//     backticks, no line inside is a fence that long.
#include <string>

#include <gate/render/escape.hpp>
#include <gate/util/text.hpp>

#include "fuzz_support.hpp"

namespace {

using gate::fuzz::violated;

bool has_line_break(std::string_view s) { return s.find_first_of("\r\n") != std::string_view::npos; }

bool pipes_escaped(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '|' && (i == 0 || s[i - 1] != '\\')) return false;
  }
  return true;
}

std::size_t run_at(std::string_view s, std::size_t i) {
  std::size_t n = 0;
  while (i + n < s.size() && s[i + n] == '`')
    ++n;
  return n;
}

void check_cell(std::string_view in) {
  std::string out = gate::render::md_cell(in);
  if (has_line_break(out)) violated("md_cell: line break");
  if (out.find('<') != std::string::npos) violated("md_cell: raw '<'");
  if (!pipes_escaped(out)) violated("md_cell: unescaped '|'");
  if (!gate::valid_utf8(out)) violated("md_cell: invalid UTF-8");
}

void check_span(std::string_view in, bool in_table) {
  std::string out = gate::render::md_code_span(in, in_table);
  if (has_line_break(out)) violated("md_code_span: line break");
  if (!gate::valid_utf8(out)) violated("md_code_span: invalid UTF-8");
  if (in_table && !pipes_escaped(out)) violated("md_code_span: unescaped '|' in a table");
  std::size_t n = run_at(out, 0);
  if (n == 0 || out.size() < 2 * n + 2) violated("md_code_span: no opening fence");
  // The closing fence: exactly n backticks at the end, not preceded by one.
  if (out.compare(out.size() - n, n, out, 0, n) != 0 || out[out.size() - n - 1] == '`')
    violated("md_code_span: no matching closing fence");
  std::string_view body = std::string_view(out).substr(n, out.size() - 2 * n);
  for (std::size_t i = 0; i < body.size();) {
    std::size_t r = run_at(body, i);
    if (r == n) violated("md_code_span: body closes the span early");
    i += r ? r : 1;
  }
}

void check_block(std::string_view in) {
  std::string out = gate::render::md_code_block(in);
  if (!gate::valid_utf8(out)) violated("md_code_block: invalid UTF-8");
  std::size_t n = run_at(out, 0);
  if (n < 3 || out.size() < 2 * n + 2 || out[n] != '\n') violated("md_code_block: no opening fence line");
  if (out.back() != '\n' || out.compare(out.size() - n - 1, n, out, 0, n) != 0 ||
      out[out.size() - n - 2] != '\n')
    violated("md_code_block: no closing fence line");
  // Inside, a line of n or more backticks (after up to three spaces) would
  // close the block.
  std::string_view body = std::string_view(out).substr(n + 1, out.size() - 2 * n - 2);
  for (std::size_t start = 0; start < body.size();) {
    std::size_t end = body.find('\n', start);
    if (end == std::string_view::npos) end = body.size();
    std::string_view line = body.substr(start, end - start);
    std::size_t lead = line.find_first_not_of(' ');
    if (lead != std::string_view::npos && lead <= 3 && run_at(line, lead) >= n)
      violated("md_code_block: a line inside closes the block");
    start = end + 1;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view in = gate::fuzz::as_text(data, size);
  check_cell(in);
  check_span(in, false);
  check_span(in, true);
  check_block(in);
  return 0;
}
