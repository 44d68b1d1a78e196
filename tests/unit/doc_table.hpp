#pragma once
// Reading the Markdown tables that unit tests keep equal to tables in the
// code (README's configuration reference, suite-format.md's check types).

#include <string>
#include <vector>

namespace gate::test {

inline std::string trim(std::string s) {
  const auto b = s.find_first_not_of(' ');
  const auto e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

inline std::string strip_backticks(std::string s) {
  if (s.size() >= 2 && s.front() == '`' && s.back() == '`') return s.substr(1, s.size() - 2);
  return s;
}

// Cells of a Markdown table row; "\|" is a literal bar inside a cell.
inline std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cur += '|';
      ++i;
    } else if (line[i] == '|') {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += line[i];
    }
  }
  // Drop what precedes the first bar and follows the last.
  if (!out.empty()) out.erase(out.begin());
  return out;
}

} // namespace gate::test
