#pragma once

// Private to the report reader: its per-object state and the key lookup.
// What it expects where is the description of each struct (layout.hpp);
// the SAX handler that walks them is in read_builder.hpp.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include <gate/report/described.hpp>

namespace gate::report::detail {

// Where the reader stands. Described structs (layout.hpp) are `object`,
// arrays of them `list`; the rest is the report's own shape.
enum class Ctx : std::uint8_t { top, route, config, skip, tasks, task, runs, run, object, list };

struct Frame {
  Ctx ctx;
  const Table* table;     // the struct's description (top, task, run, object) or a list's element's
  int field = -1;         // the key just read, in contexts with a table
  std::uint32_t seen = 0; // fields read so far
  std::size_t count = 0;  // elements so far, in array contexts
  std::size_t hashes = 0; // where this object's key hashes start (skip, config)
  // Bit (hash & 63) of every key hash of this object (skip, config): a key
  // whose bit is clear is new without searching the hashes, which spares
  // most of the search in the per-task "stats" objects every report has.
  std::uint64_t hash_bits = 0;
  void* obj = nullptr;              // the struct (object, run, task, top) or the vector (list)
  const FieldReader* via = nullptr; // list: the field that holds it
};

// The hash of a key of a free-form object (duplicates are found by hash).
// Eight bytes per step, then a final mix (murmur3's): a report has about
// twenty such keys per task, and byte-at-a-time hashing was a visible part
// of reading one.
inline std::uint64_t key_hash(std::string_view s) {
  auto mix = [](std::uint64_t h, std::uint64_t w) {
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
  };
  std::uint64_t h = s.size();
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = mix(h, w);
  }
  if (i < s.size()) {
    std::uint64_t w = 0; // the tail byte by byte: a memcpy of a variable size is a library call
    for (unsigned shift = 0; i < s.size(); ++i, shift += 8)
      w |= std::uint64_t{static_cast<unsigned char>(s[i])} << shift;
    h = mix(h, w);
  }
  h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
  h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

// Field names are short: compared eight bytes at a time inline, which
// costs less than a call to memcmp (one per key of the file).
inline bool same_text(const char* a, const char* b, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    if (x != y) return false;
  }
  for (; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// The index of `k` in `names`, searched from `from` on, then before it
// (files gate wrote list the fields in table order, leaving out absent
// optional ones); names.size() when absent. Lengths are compared first.
inline std::size_t find_field(const std::vector<std::string_view>& names, std::string_view k,
                              std::size_t from) {
  const std::size_t n = names.size();
  auto is = [&](std::size_t i) {
    return names[i].size() == k.size() && same_text(names[i].data(), k.data(), k.size());
  };
  for (std::size_t i = from; i < n; ++i)
    if (is(i)) return i;
  for (std::size_t i = 0; i < from && i < n; ++i)
    if (is(i)) return i;
  return n;
}

} // namespace gate::report::detail
