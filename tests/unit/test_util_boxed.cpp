#include <doctest.h>

#include <string>
#include <utility>

#include <gate/util/boxed.hpp>

using gate::Boxed;

TEST_CASE("Boxed: empty by default, set by assignment or emplace, copies are deep") {
  Boxed<std::string> a;
  CHECK_FALSE(a);
  CHECK_FALSE(a.has_value());
  a = std::string("first");
  REQUIRE(a);
  CHECK(*a == "first");
  CHECK(a->size() == 5);

  Boxed<std::string> b = a; // a copy owns its own value
  *b = "second";
  CHECK(*a == "first");
  CHECK(*b == "second");

  Boxed<std::string> c;
  c = b;
  b.reset();
  CHECK_FALSE(b);
  CHECK(*c == "second");
  const Boxed<std::string>& same = c; // through a reference: clang warns on a plain c = c
  c = same;                           // self-assignment keeps the value
  CHECK(*c == "second");

  Boxed<std::string> d = std::move(c);
  CHECK(*d == "second");
  CHECK_FALSE(c); // NOLINT(bugprone-use-after-move): moved-from is empty, by unique_ptr
  CHECK(d.emplace(3, 'x') == "xxx");
  Boxed<std::string> empty;
  d = empty;
  CHECK_FALSE(d);
}
