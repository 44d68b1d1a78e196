#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gate::json {

// How an object's members or an array's elements are laid out: all on one
// line, or one per line with the closing bracket on a line of its own (so
// that two documents diff line by line). Empty containers are `{}` / `[]`.
enum class Layout { compact, lines };

// A streaming writer of one JSON document, appended to `out` in call order:
// no value is built first, so keys come out in the order the caller writes
// them. String values are redacted (util/redact) and made valid UTF-8; keys
// are the caller's own names and are only escaped. Numbers are written as
// append_number writes them (shortest round trip, non-finite as null).
class Writer {
public:
  explicit Writer(std::string& out) : out_(out) {}

  Writer& begin_object(Layout layout = Layout::compact);
  Writer& end_object();
  Writer& begin_array(Layout layout = Layout::compact);
  Writer& end_array();
  // A member's name; the next value written is its value.
  Writer& key(std::string_view name);

  Writer& str(std::string_view v);
  Writer& num(double v);
  Writer& num(const std::optional<double>& v) { return v ? num(*v) : null(); }
  Writer& integer(std::int64_t v);
  // A separate name: an int argument would make integer(uint64_t) ambiguous.
  Writer& unsigned_integer(std::uint64_t v);
  template <class I> Writer& integer(const std::optional<I>& v) { return v ? integer(*v) : null(); }
  Writer& boolean(bool v);
  Writer& null();
  Writer& strings(const std::vector<std::string>& v);

  // A member at once: key(name) then the value.
  Writer& str(std::string_view name, std::string_view v) { return key(name).str(v); }
  Writer& num(std::string_view name, const std::optional<double>& v) { return key(name).num(v); }
  Writer& num(std::string_view name, double v) { return key(name).num(v); }
  template <class I> Writer& integer(std::string_view name, const I& v) { return key(name).integer(v); }
  Writer& boolean(std::string_view name, bool v) { return key(name).boolean(v); }
  Writer& strings(std::string_view name, const std::vector<std::string>& v) { return key(name).strings(v); }

private:
  struct Level {
    Layout layout;
    bool first = true;
  };
  // The comma and line break before a member or an element.
  void separate();
  // Before any value: a member's value follows its key directly.
  void value();
  Writer& close(char bracket);

  std::string& out_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

} // namespace gate::json
