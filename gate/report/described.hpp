#pragma once

// A persisted struct described once: its fields in the order the writer
// emits them, the codec of each (how it is written, and what a reader
// accepts), and for an optional field when it is written. The report's
// writer, its streaming reader and the schema test walk these descriptions;
// a struct gets one by specializing Description (the report's own are in
// layout.hpp).
//
//   template <> struct Description<S> {
//     static constexpr const char* place = ": thing "; // how an error names it
//     static constexpr auto fields = std::tuple{field<Text>("name", &S::name), ...};
//   };

#include <climits>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <gate/util/json.hpp>

namespace gate::report::detail {

// What a scalar event of the parser carries.
struct Scalar {
  enum Kind { string, int64, uint64, number, boolean, null } kind;
  std::string_view text{};
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0;
  bool b = false;
};

// A string literal, redacted and made valid UTF-8 (report_write.cpp): every
// text of a report goes through it.
void write_string(std::string_view s, std::string& out);
void write_int(std::int64_t v, std::string& out);

// A codec's read answers nullptr, or what the value should have been
// ("a string"), or k_too_large.
inline constexpr char k_too_large[] = "too large";

struct Text {
  static constexpr const char* expected = "a string";
  static void write(const std::string& v, std::string& out) { write_string(v, out); }
  static const char* read(const Scalar& s, std::string& v) {
    if (s.kind != Scalar::string) return expected;
    v.assign(s.text);
    return nullptr;
  }
};

struct Flag {
  static constexpr const char* expected = "true or false";
  static void write(bool v, std::string& out) { out += v ? "true" : "false"; }
  static const char* read(const Scalar& s, bool& v) {
    if (s.kind != Scalar::boolean) return expected;
    v = s.b;
    return nullptr;
  }
};

// An integer >= 0 (a count, an index, tokens), as int64 or int.
struct Count {
  static constexpr const char* expected = "an integer";
  static void write(std::int64_t v, std::string& out) { write_int(v, out); }
  static const char* read(const Scalar& s, std::int64_t& v) {
    if (s.kind != Scalar::int64) return s.kind == Scalar::uint64 ? "<= 2^63 - 1" : expected;
    if (s.i < 0) return ">= 0";
    v = s.i;
    return nullptr;
  }
  static const char* read(const Scalar& s, int& v) {
    std::int64_t i = 0;
    if (const char* e = read(s, i)) return e;
    if (i > INT_MAX) return k_too_large;
    v = static_cast<int>(i);
    return nullptr;
  }
};

// A process exit status: -1 (killed or never started) to 255.
struct ExitCode {
  static constexpr const char* expected = "an integer from -1 to 255";
  static void write(int v, std::string& out) { write_int(v, out); }
  static const char* read(const Scalar& s, int& v) {
    if (s.kind != Scalar::int64 || s.i < -1 || s.i > 255) return expected;
    v = static_cast<int>(s.i);
    return nullptr;
  }
};

// A duration in milliseconds, >= 0, written in shortest round-trip form.
struct Millis {
  static constexpr const char* expected = "a number";
  static void write(double v, std::string& out) { json::append_number(v, out); }
  static const char* read(const Scalar& s, double& v) {
    if (s.kind == Scalar::number || s.kind == Scalar::uint64)
      v = s.d;
    else if (s.kind == Scalar::int64)
      v = static_cast<double>(s.i);
    else
      return expected;
    return v < 0 ? ">= 0" : nullptr;
  }
};

// A cost in USD a harness recorded (gate analyze), >= 0; the field is
// written only when the value is present.
struct Usd {
  static constexpr const char* expected = "a number";
  static void write(const std::optional<double>& v, std::string& out) {
    json::append_number(v.value_or(0), out);
  }
  static const char* read(const Scalar& s, std::optional<double>& v) {
    double d = 0;
    if (const char* e = Millis::read(s, d)) return e;
    v = d;
    return nullptr;
  }
};

// Written only (the stats, which a reader recomputes rather than reads): a
// number, null when not finite; null for an absent value; arrays of numbers
// and strings.
struct Number {
  static constexpr const char* expected = "a number";
  static void write(double v, std::string& out) { json::append_number(v, out); }
};
template <class Codec> struct OrNull {
  static constexpr const char* expected = "a value or null";
  template <class V> static void write(const std::optional<V>& v, std::string& out) {
    if (v)
      Codec::write(*v, out);
    else
      out += "null";
  }
};
template <class Codec> struct ArrayOf {
  static constexpr const char* expected = "an array";
  template <class V> static void write(const std::vector<V>& v, std::string& out) {
    out.push_back('[');
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i != 0) out.push_back(',');
      Codec::write(v[i], out);
    }
    out.push_back(']');
  }
};

// A JSON array of described structs (std::vector<T>).
struct List {
  static constexpr const char* expected = "an array";
};
// A JSON object that is a described struct; with Maybe, an optional one
// (std::optional or Boxed, created by the reader when present).
struct Object {
  static constexpr const char* expected = "an object";
};
struct Maybe {
  static constexpr const char* expected = "an object";
};
// A field whose reading and writing the owner does by hand (free-form
// JSON, maps, values that depend on the rest of the document). Only its
// name, place and presence are described.
template <const char* Expected> struct Custom { static constexpr const char* expected = Expected; };
inline constexpr char k_an_object[] = "an object";
inline constexpr char k_an_array[] = "an array";
inline constexpr char k_a_string[] = "a string";
inline constexpr char k_object_or_null[] = "an object or null";

template <class T> struct is_custom : std::false_type {};
template <const char* E> struct is_custom<Custom<E>> : std::true_type {};

struct Always {
  template <class S> constexpr bool operator()(const S&) const { return true; }
};

// One field: its name, the codec, how to reach the value in the struct
// (a generic lambda returning a reference, so that the same one serves the
// writer's const struct and the reader's), and when it is written. A field
// with a `when` is optional: absent when written without it, and a reader
// accepts it either way.
template <class Codec, class Access, class When = Always> struct Field {
  using codec = Codec;
  std::string_view name;
  Access access;
  When when = {};
  static constexpr bool optional = !std::is_same_v<When, Always>;
};

template <class M, class S> struct Member {
  M S::*m;
  constexpr M& operator()(S& s) const { return s.*m; }
  constexpr const M& operator()(const S& s) const { return s.*m; }
};

template <class Codec, class M, class S> constexpr auto field(std::string_view name, M S::*m) {
  return Field<Codec, Member<M, S>>{name, {m}};
}
template <class Codec, class M, class S, class When>
constexpr auto field(std::string_view name, M S::*m, When when) {
  return Field<Codec, Member<M, S>, When>{name, {m}, when};
}
template <class Codec, class Access, class When>
constexpr auto field_via(std::string_view name, Access access, When when) {
  return Field<Codec, Access, When>{name, access, when};
}
template <class Codec> constexpr auto custom(std::string_view name) { return Field<Codec, Always>{name, {}}; }
template <class Codec, class When> constexpr auto custom(std::string_view name, When when) {
  return Field<Codec, Always, When>{name, {}, when};
}

template <class T> struct Description;

template <class T> constexpr std::size_t field_count = std::tuple_size_v<decltype(Description<T>::fields)>;

// The position of `name` in T's description, for the owner of a Custom
// field to switch on; a name that is not there fails to compile where it
// is used as a constant.
template <class T> constexpr std::size_t index_of(std::string_view name) {
  std::size_t at = field_count<T>;
  std::size_t i = 0;
  std::apply([&](const auto&... f) { ((f.name == name ? (at = i, ++i) : ++i), ...); },
             Description<T>::fields);
  if (at == field_count<T>) throw "no such field";
  return at;
}

// ---- writing ----

// How an object is laid out: compact (`{"a":1,"b":2}`) or one field per
// line (the report's header).
struct Compact {
  static constexpr std::string_view open = "{\"", next = ",\"", colon = "\":";
};
struct Lines {
  static constexpr std::string_view open = "{\n\"", next = ",\n\"", colon = "\": ";
};

template <class T> void write_object(const T& o, std::string& out);

template <class Codec, class V> void write_value(const V& v, std::string& out) {
  if constexpr (std::is_same_v<Codec, List>) {
    out.push_back('[');
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i != 0) out.push_back(',');
      write_object(v[i], out);
    }
    out.push_back(']');
  } else if constexpr (std::is_same_v<Codec, Object>) {
    write_object(v, out);
  } else if constexpr (std::is_same_v<Codec, Maybe>) {
    write_object(*v, out);
  } else {
    Codec::write(v, out);
  }
}

// Written only: a std::map as a JSON object in key order, each value as
// `Codec` writes it; integer keys are written as strings.
template <class Codec> struct MapOf {
  static constexpr const char* expected = "an object";
  template <class M> static void write(const M& m, std::string& out) {
    out.push_back('{');
    bool first = true;
    for (const auto& [k, v] : m) {
      if (!first) out.push_back(',');
      first = false;
      if constexpr (std::is_integral_v<std::decay_t<decltype(k)>>) {
        out.push_back('"');
        write_int(k, out);
        out.push_back('"');
      } else {
        write_string(k, out);
      }
      out.push_back(':');
      write_value<Codec>(v, out);
    }
    out.push_back('}');
  }
};

// Opens the object and writes the fields of `o` that are present, in
// description order; the caller closes it. `custom(name, key)` writes a
// Custom field, calling key() first when it writes it at all.
template <class Layout = Compact, class T, class CustomWriter>
void write_fields(const T& o, std::string& out, CustomWriter&& custom) {
  bool first = true;
  auto key = [&](std::string_view name) {
    out += first ? Layout::open : Layout::next;
    first = false;
    out += name;
    out += Layout::colon;
  };
  auto one = [&](const auto& f) {
    using F = std::decay_t<decltype(f)>;
    if (!f.when(o)) return;
    if constexpr (is_custom<typename F::codec>::value) {
      custom(f.name, [&] { key(f.name); });
    } else {
      key(f.name);
      write_value<typename F::codec>(f.access(o), out);
    }
  };
  std::apply([&](const auto&... f) { (one(f), ...); }, Description<T>::fields);
  if (first) out.push_back('{');
}

template <class T> void write_object(const T& o, std::string& out) {
  write_fields(o, out, [](std::string_view, auto&&) {});
  out.push_back('}');
}

// ---- reading ----

struct Table;

// One field as the reader sees it, type-erased.
struct FieldReader {
  std::string_view name;
  const char* expected = nullptr;
  bool custom = false;
  // Scalars: reads the value into the struct at `obj`.
  const char* (*scalar)(void* obj, const Scalar&) = nullptr;
  // Containers (List, Object, Maybe): the element's table, the member
  // (a list, or the object, created when Maybe), and for a list the next
  // element, appended.
  const Table* element = nullptr;
  bool list = false;
  void* (*open)(void* obj) = nullptr;
  void* (*append)(void* list) = nullptr;
};

// A struct as the reader sees it: field names in description order, which
// are optional, how each is read, and how errors name it.
struct Table {
  std::vector<std::string_view> names;
  std::uint32_t optional = 0;
  std::vector<FieldReader> fields;
  const char* place = "";
  bool indexed = false; // errors add the element's position (": check 2")
};

template <class T> const Table& table_of();

template <class T> constexpr const char* place_of() {
  if constexpr (requires { Description<T>::place; })
    return Description<T>::place;
  else
    return "";
}

template <class T, std::size_t I> FieldReader reader_of() {
  using F = std::tuple_element_t<I, std::decay_t<decltype(Description<T>::fields)>>;
  using Codec = typename F::codec;
  FieldReader r;
  r.name = std::get<I>(Description<T>::fields).name;
  r.expected = Codec::expected;
  if constexpr (is_custom<Codec>::value) {
    r.custom = true;
  } else if constexpr (std::is_same_v<Codec, List> || std::is_same_v<Codec, Object> ||
                       std::is_same_v<Codec, Maybe>) {
    using V = std::decay_t<decltype(std::declval<const F&>().access(std::declval<T&>()))>;
    r.open = [](void* obj) -> void* {
      static constexpr F f = std::get<I>(Description<T>::fields);
      auto& v = f.access(*static_cast<T*>(obj));
      if constexpr (std::is_same_v<Codec, Maybe>)
        return &v.emplace();
      else
        return &v;
    };
    if constexpr (std::is_same_v<Codec, List>) {
      using E = typename V::value_type;
      r.list = true;
      r.element = &table_of<E>();
      r.append = [](void* list) -> void* { return &static_cast<V*>(list)->emplace_back(); };
    } else if constexpr (std::is_same_v<Codec, Maybe>) {
      r.element = &table_of<std::decay_t<decltype(*std::declval<V&>())>>();
    } else {
      r.element = &table_of<V>();
    }
  } else {
    r.scalar = [](void* obj, const Scalar& s) -> const char* {
      static constexpr F f = std::get<I>(Description<T>::fields);
      return Codec::read(s, f.access(*static_cast<T*>(obj)));
    };
  }
  return r;
}

template <class T> const Table& table_of() {
  static const Table t = [] {
    Table t;
    t.place = place_of<T>();
    t.indexed = std::string_view(t.place).ends_with(' ');
    static_assert(field_count<T> <= 32, "the reader keeps the fields seen in 32 bits");
    std::apply(
        [&](const auto&... f) {
          (t.names.push_back(f.name), ...);
          std::uint32_t bit = 1;
          ((t.optional |= std::decay_t<decltype(f)>::optional ? bit : 0, bit <<= 1), ...);
        },
        Description<T>::fields);
    [&]<std::size_t... I>(std::index_sequence<I...>) { (t.fields.push_back(reader_of<T, I>()), ...); }
    (std::make_index_sequence<field_count<T>>{});
    return t;
  }();
  return t;
}

// ---- one described struct as a document of its own ----

// Parses `text` into the struct at `obj` with the report reader's rules
// (strict JSON, required and unknown fields, types); Error(bad_input)
// naming `where` (report_read.cpp).
void read_into(std::string_view text, const std::string& where, const Table& table, void* obj);

template <class T> T read_described(std::string_view text, const std::string& where) {
  T value{};
  read_into(text, where, table_of<T>(), &value);
  return value;
}

template <class T> std::string write_described(const T& value) {
  std::string out;
  write_object(value, out);
  return out;
}

} // namespace gate::report::detail
