#pragma once

#include <boost/json/value.hpp>
#include <boost/system/error_code.hpp>
#include <string>
#include <string_view>

namespace gate::json {

struct ParseLimits {
  std::size_t max_depth = 64;
};

// Parses exactly one JSON text, strictly: duplicate keys, non-finite or
// overflowing numbers, invalid UTF-8, nesting deeper than the limit and
// trailing data are errors. Throws Error(bad_input) as
// "where:line:col: what was expected"; `first_line` is the line number the
// text starts at in its file (for one line of a JSONL file).
boost::json::value parse_strict(std::string_view text, const std::string& where, std::size_t first_line = 1,
                                ParseLimits limits = {});

// "where:line:col: what" for the byte `offset` of `text` (whose first line
// is `first_line` in its file).
std::string located_at(std::string_view text, std::size_t offset, const std::string& where,
                       std::size_t first_line, const std::string& what);
// A Boost.JSON parse error in words: "incomplete JSON (truncated?)", ...
std::string describe(const boost::system::error_code& ec);

// Canonical form: object keys sorted by byte order, no whitespace, numbers
// in their shortest round-trip form. Equal values give equal bytes; this is
// what the cache key hashes.
std::string canonical(const boost::json::value& v);
void append_canonical(const boost::json::value& v, std::string& out);

// What a string literal does with bytes that are not UTF-8.
enum class Utf8 {
  keep,   // copied as they are: canonical JSON hashes the bytes it was given
  repair, // each byte that starts no valid sequence becomes U+FFFD
};
// A JSON string literal (with quotes) for `s`: `"` and `\` escaped, \b \f
// \n \r \t by name, other bytes below 0x20 as \u00xx (lowercase hex),
// everything else as it is. The one escaper of gate's JSON: cache keys are
// hashed from its bytes, so the escapes above must never change.
void append_quoted(std::string_view s, std::string& out, Utf8 utf8 = Utf8::keep);
// The escape append_quoted writes for the byte `c` (< 0x20, `"` or `\`)
// into `esc`, and its length (2 or 6): for readers that compare rather than
// write (cache/entry.cpp).
std::size_t escape_of(unsigned char c, char esc[6]);
// A number in shortest round-trip form; non-finite values are written as null.
void append_number(double d, std::string& out);

// "a string", "a number", "an object", … for "expected X, got Y" messages.
const char* kind_name(const boost::json::value& v);

// A JSON number (int64, uint64 or double) as a double; `v` must be a number.
double to_double(const boost::json::value& v);

// Plain accessors that throw Error(bad_input) naming `where` and the key
// when a field is missing or has the wrong type.
// `where` is a string_view, not a std::string: g++ 13+ warns of a dangling
// reference when a function that returns one is given a temporary std::string
// (`as_object(v, path.string())`), though the result points into `v`.
const boost::json::object& as_object(const boost::json::value& v, std::string_view where);
std::string get_string(const boost::json::object& o, std::string_view key, const std::string& where);
double get_number(const boost::json::object& o, std::string_view key, const std::string& where);
std::int64_t get_int(const boost::json::object& o, std::string_view key, const std::string& where);
bool get_bool(const boost::json::object& o, std::string_view key, const std::string& where);

} // namespace gate::json
