#include <doctest.h>

#include <cmath>

#include <gate/util/format.hpp>

TEST_CASE("fixed and signed numbers") {
  CHECK(gate::fixed(12.345) == "12.3");
  CHECK(gate::fixed(2.0 / 3.0, 3) == "0.667");
  CHECK(gate::signed_fixed(1.25) == "+1.2"); // printf rounds half to even on the binary value 1.25
  CHECK(gate::signed_fixed(-0.3) == "−0.3");
  CHECK(gate::signed_fixed(-0.3, 1, true) == "-0.3");
  CHECK(gate::signed_fixed(-0.04) == "0.0"); // rounds to zero: no sign
  CHECK(gate::signed_fixed(0.0) == "0.0");
}

TEST_CASE("durations in human units") {
  CHECK(gate::human_ms(0.085046) == "85 µs"); // the HTML once said "0.085046 ms"
  CHECK(gate::human_ms(0) == "0 µs");
  CHECK(gate::human_ms(8.25) == "8.2 ms"); // 8.25 is exact; printf rounds half to even
  CHECK(gate::human_ms(812.4) == "812 ms");
  CHECK(gate::human_ms(1240) == "1.24 s");
  CHECK(gate::human_ms(12'500) == "12.5 s");
  CHECK(gate::human_ms(125'000) == "2 min 5 s");
  CHECK(gate::human_ms(std::nan("")) == "—");
}

TEST_CASE("edit distance") {
  CHECK(gate::edit_distance("kitten", "sitting") == 3); // k→s, e→i, +g
  CHECK(gate::edit_distance("nmae", "name") == 2);
  CHECK(gate::edit_distance("", "abc") == 3);
  CHECK(gate::edit_distance("same", "same") == 0);
}
