// report/described.hpp: a struct described once is written and read by the
// report's generic writer and reader, with no code of its own.
#include <doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gate/report/described.hpp>
#include <gate/util/error.hpp>

using namespace gate::report::detail;

namespace {

struct Step {
  std::string tool;
  std::int64_t tokens = 0;
};

// The same persisted struct before and after a field was added to it.
struct TraceV1 {
  int index = 0;
  std::string name;
  bool ok = false;
  double ms = 0;
  std::vector<Step> steps;
  std::string note;
};

struct TraceV2 : TraceV1 {
  std::int64_t retries = 0;
};

std::string error_of(const std::string& text) {
  try {
    (void)read_described<TraceV1>(text, "t.json");
  } catch (const gate::Error& e) {
    return e.what();
  }
  return "";
}

} // namespace

namespace gate::report::detail {

template <> struct Description<Step> {
  static constexpr const char* place = ": step ";
  static constexpr auto fields = std::tuple{
      field<Text>("tool", &Step::tool),
      field<Count>("tokens", &Step::tokens),
  };
};

inline constexpr auto has_note = [](const TraceV1& t) { return !t.note.empty(); };

template <> struct Description<TraceV1> {
  static constexpr auto fields = std::tuple{
      field<Count>("index", &TraceV1::index), field<Text>("name", &TraceV1::name),
      field<Flag>("ok", &TraceV1::ok),        field<Millis>("ms", &TraceV1::ms),
      field<List>("steps", &TraceV1::steps),  field<Text>("note", &TraceV1::note, has_note),
  };
};

// The new field is one more row; nothing else is written for it.
template <> struct Description<TraceV2> {
  static constexpr auto fields =
      std::tuple_cat(Description<TraceV1>::fields, std::tuple{field<Count>("retries", &TraceV2::retries)});
};

} // namespace gate::report::detail

TEST_CASE("a described struct round-trips through the generic writer and reader") {
  TraceV1 t;
  t.index = 3;
  t.name = "a \"quoted\"\nname";
  t.ok = true;
  t.ms = 0.1;
  t.steps = {{"search", 12}, {"edit", 0}};
  const std::string text = write_described(t);
  CHECK(text == "{\"index\":3,\"name\":\"a \\\"quoted\\\"\\nname\",\"ok\":true,\"ms\":0.1,"
                "\"steps\":[{\"tool\":\"search\",\"tokens\":12},{\"tool\":\"edit\",\"tokens\":0}]}");
  const TraceV1 back = read_described<TraceV1>(text, "t.json");
  CHECK(back.index == 3);
  CHECK(back.name == t.name);
  CHECK(back.ok);
  CHECK(back.ms == 0.1);
  REQUIRE(back.steps.size() == 2);
  CHECK(back.steps[1].tool == "edit");
  CHECK(back.steps[0].tokens == 12);
  CHECK(back.note.empty());
  CHECK(write_described(back) == text);

  t.note = "kept";
  const std::string with_note = write_described(t);
  CHECK(with_note.ends_with(",\"note\":\"kept\"}"));
  CHECK(read_described<TraceV1>(with_note, "t.json").note == "kept");
}

TEST_CASE("a field added to a described struct is written, read back and required") {
  TraceV2 t;
  t.index = 1;
  t.name = "n";
  t.steps = {{"run", 5}};
  t.retries = 2;
  const std::string text = write_described(t);
  CHECK(text.ends_with(",\"retries\":2}"));
  const TraceV2 back = read_described<TraceV2>(text, "t.json");
  CHECK(back.retries == 2);
  CHECK(back.steps.at(0).tool == "run");
  CHECK(write_described(back) == text);

  // A file written before the field existed lacks it; the old struct's
  // reader does not know it.
  TraceV1 old = t;
  CHECK_THROWS_WITH_AS((void)read_described<TraceV2>(write_described(old), "t.json"),
                       "t.json: missing field \"retries\"", gate::Error);
  CHECK(error_of(text) == "t.json: unknown field \"retries\"");
}

TEST_CASE("the generic reader checks types, ranges and duplicates, naming the element") {
  const std::string ok = R"({"index":0,"name":"x","ok":false,"ms":1,"steps":[)";
  CHECK(error_of(ok + R"({"tool":"a","tokens":1},{"tool":"b","tokens":-1}]})") ==
        "t.json: step 1: field \"tokens\" must be >= 0");
  CHECK(error_of(ok + R"({"tool":"a"}]})") == "t.json: step 0: missing field \"tokens\"");
  CHECK(error_of(ok + R"(3]})") == "t.json: expected a JSON object in \"steps\"");
  CHECK(error_of(R"({"index":0,"name":1})") == "t.json: field \"name\" must be a string");
  CHECK(error_of(R"({"index":4294967296})") == "t.json: field \"index\" is too large");
  CHECK(error_of(R"({"index":0,"ms":-2})") == "t.json: field \"ms\" must be >= 0");
  CHECK(error_of(R"({"index":0,"steps":{}})") == "t.json: field \"steps\" must be an array");
  CHECK(error_of(R"({"index":0,"index":1})").find("duplicate key \"index\"") != std::string::npos);
  CHECK(error_of(R"({"index":0,"name":"x","ok":true,"ms":0})") == "t.json: missing field \"steps\"");
}
