#include <gate/check/unicode.hpp>

#include <cstdint>
#include <new>
#include <unicode/uchar.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>

#include <gate/util/text.hpp>

namespace gate::check::detail {

namespace {

// Folds a run of valid code points (UTF-16) and appends it as UTF-8.
void fold_run(const std::u16string& run, std::string& out) {
  if (run.empty()) return;
  std::u16string folded(run.size() * 3 + 8, u'\0'); // a full fold is at most 3 units per unit
  UErrorCode err = U_ZERO_ERROR;
  int32_t n = u_strFoldCase(folded.data(), static_cast<int32_t>(folded.size()), run.data(),
                            static_cast<int32_t>(run.size()), U_FOLD_CASE_DEFAULT, &err);
  if (err == U_BUFFER_OVERFLOW_ERROR) {
    folded.assign(static_cast<std::size_t>(n), u'\0');
    err = U_ZERO_ERROR;
    n = u_strFoldCase(folded.data(), n, run.data(), static_cast<int32_t>(run.size()), U_FOLD_CASE_DEFAULT,
                      &err);
  }
  if (U_FAILURE(err)) throw std::bad_alloc(); // only memory can fail on valid input
  for (int32_t i = 0; i < n;) {
    UChar32 c = 0;
    U16_NEXT(folded.data(), i, n, c);
    append_utf8(static_cast<std::uint32_t>(c), out);
  }
}

} // namespace

std::string fold_case(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::u16string run;
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) { // ASCII, the common case, folds without ICU
      fold_run(run, out);
      run.clear();
      out.push_back(b >= 'A' && b <= 'Z' ? static_cast<char>(b + ('a' - 'A')) : static_cast<char>(b));
      ++i;
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t n = decode_utf8(s, i, cp);
    if (n == 0) {
      fold_run(run, out);
      run.clear();
      out.push_back(s[i]);
      ++i;
      continue;
    }
    if (cp < 0x10000) {
      run.push_back(static_cast<char16_t>(cp));
    } else {
      run.push_back(static_cast<char16_t>(U16_LEAD(cp)));
      run.push_back(static_cast<char16_t>(U16_TRAIL(cp)));
    }
    i += n;
  }
  fold_run(run, out);
  return out;
}

bool is_space_code_point(char32_t c) {
  if ((c >= 0x09 && c <= 0x0D) || c == 0x2028 || c == 0x2029 || c == 0xFEFF) return true;
  return c <= 0x10FFFF && u_charType(static_cast<UChar32>(c)) == U_SPACE_SEPARATOR;
}

std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = std::string_view::npos;
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = decode_utf8(s, i, cp);
    const bool space = n != 0 && is_space_code_point(static_cast<char32_t>(cp));
    if (space && start != std::string_view::npos) {
      out.push_back(s.substr(start, i - start));
      start = std::string_view::npos;
    } else if (!space && start == std::string_view::npos) {
      start = i;
    }
    i += n == 0 ? 1 : n;
  }
  if (start != std::string_view::npos) out.push_back(s.substr(start));
  return out;
}

std::size_t count_words(std::string_view s) { return split_words(s).size(); }

} // namespace gate::check::detail
