#include <doctest.h>

#include <gate/util/json_writer.hpp>
#include <gate/util/redact.hpp>

using gate::json::Layout;
using gate::json::Writer;

TEST_CASE("json::Writer writes members in call order, compact") {
  std::string out;
  Writer w(out);
  w.begin_object().str("b", "x").integer("a", -3).num("n", 0.5).boolean("t", true);
  w.num("absent", std::optional<double>{}).integer("k", std::optional<int>{7});
  w.key("list").begin_array().integer(1).null().begin_object().end_object().end_array();
  w.strings("s", {"p", "q"}).key("u").unsigned_integer(18446744073709551615u).end_object();
  CHECK(out == R"({"b":"x","a":-3,"n":0.5,"t":true,"absent":null,"k":7,"list":[1,null,{}],)"
               R"("s":["p","q"],"u":18446744073709551615})");
}

TEST_CASE("json::Writer lines layout puts each member on its own line") {
  std::string out;
  Writer w(out);
  w.begin_object(Layout::lines).integer("a", 1);
  w.key("rows").begin_array(Layout::lines);
  w.begin_object().integer("x", 1).end_object();
  w.begin_object().integer("x", 2).end_object();
  w.end_array();
  w.key("none").begin_array(Layout::lines).end_array();
  w.end_object();
  CHECK(out == "{\n\"a\":1,\n\"rows\":[\n{\"x\":1},\n{\"x\":2}\n],\n\"none\":[]\n}");
}

TEST_CASE("json::Writer redacts string values and makes them valid UTF-8") {
  gate::register_secret("sk-canary-7f3a9b1c2d4e5f60");
  std::string out;
  Writer w(out);
  w.begin_object().str("key", "sk-canary-7f3a9b1c2d4e5f60").str("bad", "a\xff\b").end_object();
  CHECK(out.find("sk-canary") == std::string::npos);
  CHECK(out.find("\"bad\":\"a\xef\xbf\xbd\\b\"") != std::string::npos);
}
