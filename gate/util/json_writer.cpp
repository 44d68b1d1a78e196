#include <gate/util/json_writer.hpp>

#include <charconv>

#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>

namespace gate::json {

void Writer::separate() {
  if (levels_.empty()) return;
  Level& l = levels_.back();
  if (!l.first) out_ += ',';
  if (l.layout == Layout::lines) out_ += '\n';
  l.first = false;
}

void Writer::value() {
  if (after_key_)
    after_key_ = false;
  else
    separate();
}

Writer& Writer::begin_object(Layout layout) {
  value();
  out_ += '{';
  levels_.push_back({layout});
  return *this;
}

Writer& Writer::begin_array(Layout layout) {
  value();
  out_ += '[';
  levels_.push_back({layout});
  return *this;
}

Writer& Writer::close(char bracket) {
  const Level l = levels_.back();
  levels_.pop_back();
  if (l.layout == Layout::lines && !l.first) out_ += '\n';
  out_ += bracket;
  return *this;
}

Writer& Writer::end_object() { return close('}'); }
Writer& Writer::end_array() { return close(']'); }

Writer& Writer::key(std::string_view name) {
  separate();
  append_quoted(name, out_);
  out_ += ':';
  after_key_ = true;
  return *this;
}

Writer& Writer::str(std::string_view v) {
  value();
  // contains_secret returns at once when no secret is registered: the
  // common path makes no copy.
  if (contains_secret(v))
    append_quoted(redact(v), out_, Utf8::repair);
  else
    append_quoted(v, out_, Utf8::repair);
  return *this;
}

Writer& Writer::num(double v) {
  value();
  append_number(v, out_);
  return *this;
}

namespace {
template <class I> void append_integer(I v, std::string& out) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}
} // namespace

Writer& Writer::integer(std::int64_t v) {
  value();
  append_integer(v, out_);
  return *this;
}

Writer& Writer::unsigned_integer(std::uint64_t v) {
  value();
  append_integer(v, out_);
  return *this;
}

Writer& Writer::boolean(bool v) {
  value();
  out_ += v ? "true" : "false";
  return *this;
}

Writer& Writer::null() {
  value();
  out_ += "null";
  return *this;
}

Writer& Writer::strings(const std::vector<std::string>& v) {
  begin_array();
  for (const auto& s : v)
    str(s);
  return end_array();
}

} // namespace gate::json
