#include <gate/report/report.hpp>

#include <gate/util/text.hpp>

namespace gate::report {

std::string to_valid_utf8(std::string_view s) {
  if (valid_utf8(s)) return std::string(s);
  static constexpr std::string_view k_replacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(s.size() + 16);
  std::size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80             ? 1
                      : (c & 0xe0) == 0xc0 ? 2
                      : (c & 0xf0) == 0xe0 ? 3
                      : (c & 0xf8) == 0xf0 ? 4
                                           : 0;
    // valid_utf8 on the candidate sequence alone rejects overlongs,
    // surrogates and truncation with the same rules as the whole-text check.
    if (len != 0 && i + len <= s.size() && valid_utf8(s.substr(i, len))) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += k_replacement;
      ++i;
    }
  }
  return out;
}

} // namespace gate::report
