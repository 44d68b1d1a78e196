#include <doctest.h>

#include <gate/run/select.hpp>

using gate::run::select;
using gate::run::shard_of;

namespace {

gate::suite::Suite suite_of(int n) {
  gate::suite::Suite s;
  for (int i = 0; i < n; ++i) {
    gate::suite::Case c;
    c.id = "task-" + std::to_string(i);
    c.line = i + 1;
    s.cases.push_back(c);
  }
  return s;
}

std::vector<std::string> ids(const std::vector<const gate::suite::Case*>& cases) {
  std::vector<std::string> out;
  for (const auto* c : cases)
    out.push_back(c->id);
  return out;
}

} // namespace

TEST_CASE("shard_of is the first 8 bytes of sha256(id) modulo n, plus one") {
  // sha256("a") = ca978112ca1bbdca…; 0x…ca mod 4 = 0b1010 & 3 = 2 → shard 3.
  CHECK(shard_of("a", 4) == 3);
  // 0xca978112ca1bbdca = 14598278634844962250; its digits sum to 97 and
  // 97 mod 3 = 1, so the remainder is 1 → shard 2.
  CHECK(shard_of("a", 3) == 2);
  CHECK(shard_of("anything", 1) == 1);
}

TEST_CASE("n shards partition the selection, each in suite order") {
  gate::suite::Suite s = suite_of(200);
  gate::config::Config c;
  std::vector<std::string> all;
  for (int i = 1; i <= 4; ++i) {
    c.shard = gate::config::Shard{i, 4};
    std::vector<std::string> part = ids(select(s, c));
    CHECK(!part.empty());
    CHECK(std::is_sorted(part.begin(), part.end(), [](const std::string& a, const std::string& b) {
      return std::stoi(a.substr(5)) < std::stoi(b.substr(5));
    }));
    all.insert(all.end(), part.begin(), part.end());
  }
  std::sort(all.begin(), all.end());
  c.shard.reset();
  std::vector<std::string> whole = ids(select(s, c));
  std::sort(whole.begin(), whole.end());
  CHECK(all == whole);
}

TEST_CASE("adding a task moves no other task to another shard") {
  gate::config::Config c;
  c.shard = gate::config::Shard{2, 3};
  std::vector<std::string> before = ids(select(suite_of(50), c));
  std::vector<std::string> after = ids(select(suite_of(51), c));
  after.erase(std::remove(after.begin(), after.end(), "task-50"), after.end());
  CHECK(before == after);
}

TEST_CASE("a shard applies after --filter") {
  gate::suite::Suite s = suite_of(40);
  gate::config::Config c;
  c.filter = {"task-1*"};
  c.shard = gate::config::Shard{1, 2};
  for (const std::string& id : ids(select(s, c))) {
    CHECK(id.rfind("task-1", 0) == 0);
    CHECK(shard_of(id, 2) == 1);
  }
}
