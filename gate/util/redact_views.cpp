#include <gate/util/redact_views.hpp>

#include <algorithm>
#include <map>

#include <gate/util/text.hpp>

namespace gate::detail {

namespace {

// The code unit of "\uXXXX" at in[i], or -1.
long u_escape_at(std::string_view in, std::size_t i) {
  if (i + 6 > in.size() || in[i] != '\\' || in[i + 1] != 'u') return -1;
  long v = 0;
  for (std::size_t k = i + 2; k < i + 6; ++k) {
    int d = hex_digit(in[k]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

char simple_escape(char c) {
  switch (c) {
  case '"': return '"';
  case '\\': return '\\';
  case '/': return '/';
  case 'b': return '\b';
  case 'f': return '\f';
  case 'n': return '\n';
  case 'r': return '\r';
  case 't': return '\t';
  default: return 0;
  }
}

// The string values of one JSON text with the path each sits at; keys are
// not values. Stops quietly at anything that is not JSON: a data line that
// is not JSON has no values worth joining.
template <class OnValue> void json_values(std::string_view s, std::size_t base, OnValue on_value) {
  struct Frame {
    bool object;
    std::size_t index = 0;
    std::string key;
    bool want_key = true;
  };
  std::vector<Frame> stack;
  auto path = [&] {
    std::string p;
    for (const Frame& f : stack) {
      p += f.object ? f.key : std::to_string(f.index);
      p += '\x1f';
    }
    return p;
  };
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (c == '{' || c == '[') {
      if (stack.size() >= 64) return;
      stack.push_back(Frame{c == '{', 0, {}, true});
      ++i;
    } else if (c == '}' || c == ']') {
      if (stack.empty()) return;
      stack.pop_back();
      ++i;
    } else if (c == ',' || c == ':') {
      if (stack.empty()) return;
      Frame& top = stack.back();
      if (c == ':')
        top.want_key = false;
      else if (top.object)
        top.want_key = true;
      else
        ++top.index;
      ++i;
    } else if (c == '"') {
      std::size_t j = i + 1;
      while (j < s.size() && s[j] != '"')
        j += s[j] == '\\' ? 2 : 1;
      if (j >= s.size()) return;
      if (!stack.empty() && stack.back().object && stack.back().want_key)
        stack.back().key = std::string(s.substr(i + 1, j - i - 1));
      else
        on_value(path(), Span{base + i + 1, base + j});
      i = j + 1;
    } else {
      ++i; // whitespace, numbers, true, false, null
    }
  }
}

} // namespace

Span Unescaped::source(Span s) const {
  if (s.end <= s.begin) return s;
  auto last_at_or_before = [&](std::size_t pos) -> const Escape* {
    auto it = std::upper_bound(escapes.begin(), escapes.end(), pos,
                               [](std::size_t p, const Escape& e) { return p < e.out_begin; });
    return it == escapes.begin() ? nullptr : &*(it - 1);
  };
  Span out;
  const Escape* b = last_at_or_before(s.begin);
  out.begin = b == nullptr           ? s.begin
              : s.begin < b->out_end ? b->in_begin
                                     : b->in_end + (s.begin - b->out_end);
  const std::size_t last = s.end - 1;
  const Escape* e = last_at_or_before(last);
  out.end = e == nullptr ? last + 1 : last < e->out_end ? e->in_end : e->in_end + (last - e->out_end) + 1;
  return out;
}

Unescaped unescape(std::string_view in) {
  Unescaped u;
  u.text.reserve(in.size());
  for (std::size_t i = 0; i < in.size();) {
    if (in[i] != '\\' || i + 1 == in.size()) {
      u.text += in[i++];
      continue;
    }
    const std::size_t out_begin = u.text.size();
    std::size_t len = 0;
    if (char c = simple_escape(in[i + 1]); c != 0) {
      u.text += c;
      len = 2;
    } else if (long cp = u_escape_at(in, i); cp >= 0) {
      len = 6;
      if (cp >= 0xd800 && cp < 0xdc00) {
        long low = u_escape_at(in, i + 6);
        if (low >= 0xdc00 && low < 0xe000) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          len = 12;
        }
      }
      // A lone surrogate has no UTF-8 form; U+FFFD keeps the offsets honest.
      if (cp >= 0xd800 && cp < 0xe000) cp = 0xfffd;
      append_utf8(static_cast<std::uint32_t>(cp), u.text);
    } else {
      u.text += in[i++];
      continue;
    }
    u.escapes.push_back({out_begin, u.text.size(), i, i + len});
    i += len;
  }
  return u;
}

bool has_escapes(std::string_view in) {
  for (std::size_t i = in.find('\\'); i != std::string_view::npos && i + 1 < in.size();
       i = in.find('\\', i + 2)) {
    const char c = in[i + 1];
    if (c == 'u' || c == '/' || c == '\\') return true;
  }
  return false;
}

void find_unescaped(std::string_view raw, const Finder& find, const std::function<void(Span)>& hit) {
  std::vector<Unescaped> levels;
  levels.reserve(3); // string_views into earlier levels must stay valid
  std::string_view text = raw;
  while (levels.size() < 3 && has_escapes(text)) {
    levels.push_back(unescape(text));
    text = levels.back().text;
    find(text, [&](Span s) {
      for (std::size_t j = levels.size(); j-- > 0;)
        s = levels[j].source(s);
      hit(s);
    });
  }
}

void find_across_events(std::string_view raw, const Finder& find, const std::function<void(Span)>& hit) {
  if (raw.find("data:") == std::string_view::npos) return; // the common case: not a stream
  // Values in stream order, by path.
  std::map<std::string, std::vector<Span>> by_path;
  int data_lines = 0;
  for (std::size_t begin = 0; begin < raw.size();) {
    std::size_t end = raw.find('\n', begin);
    if (end == std::string_view::npos) end = raw.size();
    std::string_view line = raw.substr(begin, end - begin);
    if (line.starts_with("data:")) {
      ++data_lines;
      std::size_t at = begin + 5;
      if (at < end && raw[at] == ' ') ++at;
      json_values(raw.substr(at, end - at), at,
                  [&](std::string path, Span s) { by_path[std::move(path)].push_back(s); });
    }
    begin = end + 1;
  }
  if (data_lines < 2) return;

  struct Piece {
    std::size_t view_begin;
    std::size_t raw_begin;
    Unescaped text;
  };
  for (const auto& [path, spans] : by_path) {
    if (spans.size() < 2) continue; // one value alone is seen in the raw text already
    std::vector<Piece> pieces;
    std::string joined;
    for (Span s : spans) {
      Piece p{joined.size(), s.begin, unescape(raw.substr(s.begin, s.end - s.begin))};
      joined += p.text.text;
      pieces.push_back(std::move(p));
    }
    find(joined, [&](Span m) {
      auto it = std::upper_bound(pieces.begin(), pieces.end(), m.begin,
                                 [](std::size_t pos, const Piece& p) { return pos < p.view_begin; });
      for (std::size_t k = static_cast<std::size_t>(it - pieces.begin()) - 1;
           k < pieces.size() && pieces[k].view_begin < m.end; ++k) {
        const Piece& p = pieces[k];
        const std::size_t lb = std::max(m.begin, p.view_begin) - p.view_begin;
        const std::size_t le = std::min(m.end, p.view_begin + p.text.text.size()) - p.view_begin;
        if (le <= lb) continue;
        Span local = p.text.source({lb, le});
        hit({p.raw_begin + local.begin, p.raw_begin + local.end});
      }
    });
  }
}

} // namespace gate::detail
